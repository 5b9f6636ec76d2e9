"""Host plumbing that every fowlplay command shares: nothing here knows a game.

- `untrusted`: reading files someone else may have written, within bounds set before allocating.
- `files`: writing a file whole or not at all (`atomic_write`, `WriteError`).
- `lock`: one writer per output folder.
- `stopping`: Ctrl-C and SIGTERM take one path in every command (exit 130 / 143).
- `cli`: argument types, one-line warnings and errors, a stoppable command body.
- `threads`: OpenMP settings for shared cores.

It sits under `envs` because `envs` is the layer that every command installs and that imports
nothing above it; `training` and `evaluation` both use it. It needs only the standard library and
NumPy, and `import fowlplay.envs` does not import it.
"""
