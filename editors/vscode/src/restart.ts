/**
 * When to restart a crashed server: up to `maxRestarts` crashes within
 * `windowMs`, like vscode-languageclient's default (5 crashes in 3 minutes
 * and it gives up), but ours so the user is told what to do next.
 */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    readonly maxRestarts = 4,
    readonly windowMs = 3 * 60 * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Record a crash; true when the server should be restarted. */
  crashed(): boolean {
    const at = this.now();
    this.crashes = [...this.crashes.filter((t) => at - t < this.windowMs), at];
    return this.crashes.length <= this.maxRestarts;
  }

  /** Crashes counted in the current window. */
  get recentCrashes(): number {
    return this.crashes.length;
  }

  reset(): void {
    this.crashes = [];
  }
}
