"""The ``*** Begin Patch`` edit format that OpenAI's models write (``apply_patch``).

The grammar and the matching rules follow OpenAI Codex's ``apply_patch`` (its
own scenarios, read in place from ``../shared/conformance/apply_patch``),
because that is the format the models are trained on::

    *** Begin Patch
    *** Add File: path/new.txt
    +line one
    *** Delete File: path/old.txt
    *** Update File: path/mod.txt
    *** Move to: path/renamed.txt
    @@ def anchor():
     context line
    -removed line
    +added line
    *** End of File
    *** End Patch

One deliberate difference: applying is **atomic**. The whole patch is parsed
and resolved against the current files in memory first; only when every
change is known to apply is anything written, each file through a temporary
file renamed into place. If a write still fails, the files already changed are
restored. A patch that fails therefore changes nothing.

Every path goes through :class:`Workspace`: it must resolve inside the
workspace, and all access is descriptor-relative without following symlinks,
so nothing outside the workspace can be read or written.

The modules, in the order a patch goes through them: ``grammar`` (parse),
``seek`` (find the lines a change replaces), ``update`` (an updated file's
new text), ``plan`` (every hunk resolved in memory), then ``edit`` (the plan
as one editor edit) or ``disk`` (committed all or nothing), and ``diff``.
The tool itself is ``agentls.tools.apply_patch``.
"""
