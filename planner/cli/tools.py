"""The tools around plans: `planner fmt`, `lsp`, `completion` and `library`."""

from __future__ import annotations

import argparse
import sys

from .emit import emit
from .options import EXIT_CHECK_FAILED, EXIT_OK
from .output import write_output


def add_fmt(sub) -> None:
    p = sub.add_parser("fmt", help="format .plan files canonically (aligned definitions, normalised spacing)",
                       description="Rewrite each FILE in planner's canonical layout: one space around operators, "
                                   "the `=`, docs, tags and constraints of consecutive definitions aligned, comments "
                                   "and blank-line groups kept. The meaning never changes (the tokens are checked). "
                                   "Nothing is written when a file does not parse. FILE `-` formats standard input "
                                   "to standard output.")
    p.add_argument("files", nargs="+", metavar="FILE", help="the .plan files to format")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when a file would change (for CI), listing those files")
    p.add_argument("--diff", action="store_true", help="write nothing; print what would change as a unified diff")
    p.set_defaults(handler=cmd_fmt)


def cmd_fmt(args) -> int:
    from ..language.errors import PlanError, PlanErrors
    from pathlib import Path

    from ..language.format import format_text

    results, errors = [], []
    for name in args.files:
        if name == "-":
            text = sys.stdin.read()
        else:
            from ..language.imports import read_plan

            try:  # a regular file within the size limit, never waited on (a FIFO, /dev/zero: refused)
                text = read_plan(Path(name))
            except PlanError as err:
                errors.append(err)
                continue
        crlf = "\r\n" in text
        try:
            new = format_text(text.replace("\r\n", "\n"), "<stdin>" if name == "-" else name)
        except PlanError as err:
            errors.append(err)
            continue
        results.append((name, text, new.replace("\n", "\r\n") if crlf else new))
    if errors:  # nothing is written when any file fails
        raise errors[0] if len(errors) == 1 else PlanErrors(errors)
    changed = [(name, old, new) for name, old, new in results if old != new]
    if args.diff:
        import difflib

        for name, old, new in changed:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), name, name))
    if args.check or args.diff:
        for name, _, _ in changed:
            sys.stderr.write(f"would reformat {name}\n")
        return EXIT_CHECK_FAILED if changed and args.check else EXIT_OK
    for name, old, new in results:
        if name == "-":
            sys.stdout.write(new)
        elif old != new:
            from ..outputs.build import rewrite

            rewrite(Path(name), new.encode("utf-8"),  # hard links kept
                    f"fmt rewrites {name} in place: make it (and its folder) writable, or print the result "
                    f"with `planner fmt - < {name}`")
            sys.stderr.write(f"reformatted {name}\n")
    return EXIT_OK


def add_lsp(sub) -> None:
    p = sub.add_parser("lsp", help="the language server for editors (Language Server Protocol on stdio)",
                       description="Start planner's language server on standard input and output, for an editor "
                                   "(diagnostics while the plan is half typed, hover, go to definition, completion, "
                                   "symbols, rename, quick fixes, inlay hints, formatting). "
                                   "editors/vscode is its VS Code extension.")
    p.set_defaults(handler=cmd_lsp)


def cmd_lsp(args) -> int:
    from ..lsp.server import main as serve

    return serve()  # 0 after the client's `shutdown` and `exit`, 1 when the input ended without them


def add_completion(sub) -> None:
    p = sub.add_parser("completion", help="print a shell completion script (bash; zsh with bashcompinit)",
                       description="Print a completion script for planner's commands, options, choices and .plan "
                                   "files. Load it with: eval \"$(planner completion bash)\" (in ~/.bashrc; in zsh, "
                                   "after autoload -U bashcompinit && bashcompinit).")
    p.add_argument("shell", choices=["bash", "zsh"], help="the shell")
    p.set_defaults(handler=cmd_completion)


def cmd_completion(args) -> int:
    write_output(completion_script(args.whole_parser()))
    return EXIT_OK


def completion_script(parser: argparse.ArgumentParser) -> str:
    """A bash completion function built from the parser itself: commands, options, option choices, .plan files."""
    def options(p):
        return [f for a in p._actions for f in a.option_strings]

    def valued(p):  # options that take a value: their choices, or files
        for a in p._actions:
            flags = (argparse._StoreTrueAction, argparse._StoreConstAction, argparse._HelpAction,
                     argparse._VersionAction)
            if a.option_strings and a.nargs != 0 and not isinstance(a, flags):
                yield a

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["# planner completion (bash; zsh: autoload -U bashcompinit && bashcompinit first)", "_planner() {",
             '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i',
             "    for ((i = 1; i < COMP_CWORD; i++)); do",
             '        case "${COMP_WORDS[i]}" in',
             "            --color) ((i++)) ;;", "            -*) ;;",
             '            *) cmd="${COMP_WORDS[i]}"; break ;;', "        esac", "    done",
             '    case "$cmd:$prev" in']
    for name, p in [("", parser)] + list(sub.choices.items()):
        for a in valued(p):
            if a.choices:
                action = f'COMPREPLY=($(compgen -W "{" ".join(a.choices)}" -- "$cur"))'
            elif a.dest in ("output", "template", "plan"):
                action = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:  # a name, a value or a condition: nothing to offer
                action = "COMPREPLY=()"
            pattern = "|".join(f"{name}:{flag}" for flag in a.option_strings)
            lines.append(f"        {pattern}) {action}; return ;;")
    top = " ".join(list(sub.choices) + options(parser))
    lines += ["    esac", '    case "$cmd" in', f'        "") COMPREPLY=($(compgen -W "{top}" -- "$cur")) ;;']
    for name, p in sub.choices.items():
        lines.append(f'        {name}) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "{" ".join(options(p))}" -- '
                     '"$cur")); else _planner_files; fi ;;')
    lines += ["    esac", "}",
              "_planner_files() {  # folders, .plan files and workbooks",
              '    local f; COMPREPLY=()',
              "    setopt localoptions nullglob 2>/dev/null  # zsh: a pattern that matches nothing is no error",
              '    for f in "${COMP_WORDS[COMP_CWORD]}"*; do',
              '        if [[ -d $f || ( -e $f && ( $f == *.plan || $f == *.xlsx ) ) ]]; then COMPREPLY+=("$f"); fi',
              "    done", "}",
              "complete -o filenames -F _planner planner"]
    return "\n".join(lines)


def add_library(sub) -> None:
    p = sub.add_parser("library", help="list the plans shipped with planner (hardware, formulas)",
                       description="List the plans in planner's library, to use with `import \"PATH\" as NAME`.")
    p.add_argument("path", nargs="?", metavar="PATH", help="print this library plan's text")
    p.set_defaults(handler=cmd_library)


def cmd_library(args) -> int:
    from ..language.errors import UsageError
    from ..language.imports import did_you_mean, library_dir, library_entries, suggest_entries

    entries = library_entries()
    if args.path:
        name = args.path if args.path.endswith(".plan") else args.path + ".plan"
        if name not in entries:
            guesses = suggest_entries(args.path)
            raise UsageError(f"no library plan `{args.path}`", hint=did_you_mean(guesses, "`") if guesses else
                             "entries: " + ", ".join(entries))
        write_output((library_dir() / name).read_text(encoding="utf-8"))
        return EXIT_OK
    from ..compute.evaluation import load
    from ..outputs.views import LibraryView

    emit(LibraryView([(entry, load(library_dir() / entry).title) for entry in entries]), "table")
    return EXIT_OK
