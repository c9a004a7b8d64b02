"""Small statistics helpers for the agentls demo."""


def mean(values):
    """Arithmetic mean of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("mean() of an empty sequence")
    return sum(values) / len(values)


def median(values):
    """Middle value of a non-empty sequence (the mean of the two middle values
    when there is an even number of them)."""
    if not values:
        raise ValueError("median() of an empty sequence")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return ordered[middle]
