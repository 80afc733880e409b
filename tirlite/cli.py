"""The ``tirlite`` command line: a kernel file through the build pipeline, like ``opt``.

    tirlite opt kernel.py                          # the lowered TIR on stdout
    tirlite opt kernel.py --print-after-all        # the IR after every pass, on stderr
    tirlite opt kernel.py --emit asm --target "llvm -mcpu=skylake-avx512"
    tirlite opt kernel.py --func softmax --config tir.disable_vectorize=True --remarks
    tirlite opt kernel.py --emit obj -o kernel.o --time-passes
    python -m tirlite --version

``opt`` runs the Python file, takes the ``tir.PrimFunc`` or ``tir.IRModule``
it defines at the top level (``--func NAME`` picks one, or names a function
that returns one), builds it with ``codegen.build`` under a ``PassContext``
holding the config and instruments asked for, and prints what ``--emit``
names. Diagnostics (IR dumps, remarks, timings) go to stderr, the output to
stdout or ``-o``. Bad input is one line on stderr and exit code 2
(``--traceback`` shows where it came from).

Subcommands are the entries of ``COMMANDS``: a new one is a ``Command``
(name, help, a function adding its arguments, a function running it).
"""

from __future__ import annotations

import argparse
import ast
import os
import runpy
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

import attrs

import tirlite

#: What ``--emit`` can print: the lowered TIR, optimized LLVM IR, assembly, object code.
EMIT_FORMATS = ("tir", "ll", "asm", "obj")
#: Exit code of bad input (as argparse uses for bad usage).
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


@attrs.frozen
class Command:
    """A subcommand: its name, one-line help, its arguments and what it runs."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# ------------------------------------------------------------------ tirlite opt


def _configure_opt(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a Python file defining a tir.PrimFunc or tir.IRModule")
    p.add_argument("--func", metavar="NAME",
                   help="the top-level name of the kernel (or of a function returning one)")
    p.add_argument("--target", default="llvm", help='target string (default "llvm": this CPU)')
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a PassContext config entry; VALUE is a Python literal (repeatable)")
    p.add_argument("--print-after-all", action="store_true", help="print the IR after each pass")
    p.add_argument("--print-before-all", action="store_true",
                   help="print the IR before each pass")
    p.add_argument("--print-after", action="append", default=[], metavar="PASS",
                   help="print the IR after this pass (repeatable)")
    p.add_argument("--print-before", action="append", default=[], metavar="PASS",
                   help="print the IR before this pass (repeatable)")
    p.add_argument("--emit", default="tir", metavar="FORMAT",
                   help=f"what to output: {', '.join(EMIT_FORMATS)} (default tir)")
    p.add_argument("-o", "--output", default="-", metavar="FILE", help="output file (default -)")
    p.add_argument("--remarks", action="store_true", help="print the passes' remarks")
    p.add_argument("--time-passes", action="store_true",
                   help="print the time of each pass and LLVM phase")
    p.add_argument("--interp", action="store_true",
                   help="build for the NumPy reference interpreter instead of LLVM")


def run_opt(args: argparse.Namespace) -> int:
    """``tirlite opt``: build the file's kernel and output what ``--emit`` asks for."""
    import codegen
    import transform

    if args.emit not in EMIT_FORMATS:
        raise UsageError(f"--emit {args.emit!r}: expected one of {', '.join(EMIT_FORMATS)}")
    if args.interp and args.emit != "tir":
        raise UsageError(f"--emit {args.emit} needs LLVM; with --interp only tir is built")
    if args.emit == "obj" and args.output == "-" and sys.stdout.isatty():
        raise UsageError("--emit obj writes binary; name a file with -o FILE")
    target = "interp" if args.interp else _target(args.target)
    config = dict(_config_entry(text) for text in args.config)
    printer = _printer(args)
    timing = transform.PassTimingInstrument() if args.time_passes else None
    instruments = [i for i in (printer, timing) if i is not None]
    kernel = _find_kernel(args.file, args.func)
    # After the file ran: it may register config keys of its own passes.
    ctx = transform.PassContext(config=config, instruments=instruments)
    codegen.clear_cache()  # the file may have built this kernel itself: build it again here
    with ctx:
        lib = codegen.build(kernel, target)
    if args.remarks:
        for remark in lib.remarks:
            print(f"remark: {remark}", file=sys.stderr)
    if timing is not None:
        print(timing.render(), file=sys.stderr)
    _write(args.output, _emitted(lib, args.emit))
    return 0


def _target(text: str) -> Any:
    import codegen
    from target import subtarget

    target = codegen.Target(text)
    subtarget.check(target)  # an unknown CPU or feature, now rather than after the passes
    return target


def _config_entry(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UsageError(f"--config {text!r}: expected KEY=VALUE, e.g. tir.disable_vectorize=True")
    try:
        return key.strip(), ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        raise UsageError(f"--config {text!r}: the value must be a Python literal "
                         "(True, 3, 'text', {'sub_key': 1})") from None


def _printer(args: argparse.Namespace) -> Any:
    """The IR-printing instrument ``--print-*`` ask for, or None."""
    import codegen

    known = list(dict.fromkeys(p.info.name for p in codegen.default_pipeline()))
    before = set(known) if args.print_before_all else _pass_names(args.print_before, known)
    after = set(known) if args.print_after_all else _pass_names(args.print_after, known)
    return PrintIR(before, after, sys.stderr) if before or after else None


def _pass_names(names: list[str], known: list[str]) -> set[str]:
    """Full pass names; ``VectorizeLoop`` stands for ``tir.VectorizeLoop``."""
    short = {name.rpartition(".")[2]: name for name in known}
    out = set()
    for name in names:
        full = name if name in known else short.get(name)
        if full is None:
            raise UsageError(f"--print-after/--print-before {name!r}: no such pass; "
                             f"the pipeline runs {', '.join(known)}")
        out.add(full)
    return out


class PrintIR:
    """Print the module before and/or after the named passes (``=== after Simplify ===``)."""

    def __init__(self, before: set[str], after: set[str], file: IO[str]):
        self.before, self.after, self.file = before, after, file

    def enter_pass_ctx(self) -> None:
        """Nothing to set up."""

    def exit_pass_ctx(self) -> None:
        """Nothing to tear down."""

    def should_run(self, mod: Any, info: Any) -> bool:
        """Every pass runs."""
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Print ``mod`` if ``info.name`` is asked for before."""
        if info.name in self.before:
            print(f"=== before {info.name} ===\n{mod}", file=self.file)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Print ``mod`` if ``info.name`` is asked for after."""
        if info.name in self.after:
            print(f"=== after {info.name} ===\n{mod}", file=self.file)


def _find_kernel(path: str, name: str | None) -> Any:
    """The PrimFunc or IRModule the file at ``path`` defines (named ``name`` if given)."""
    from tir.function import IRModule, PrimFunc

    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    namespace = _run_file(path)
    kinds = (PrimFunc, IRModule)
    if name is not None:
        if name not in namespace:
            raise UsageError(f"{path} defines no {name!r}; it defines {_listing(namespace, kinds)}")
        value = namespace[name]
        if callable(value) and not isinstance(value, kinds):
            value = _call(path, name, value)
        if not isinstance(value, kinds):
            raise UsageError(f"{path}: {name} is a {type(value).__name__}, not a tir.PrimFunc "
                             "or tir.IRModule")
        return value
    found: dict[int, str] = {}  # by identity: one kernel may have two names
    for key, value in namespace.items():
        if isinstance(value, kinds) and not key.startswith("_"):
            found.setdefault(id(value), key)
    if not found:
        raise UsageError(f"{path} defines no tir.PrimFunc or tir.IRModule at the top level; "
                         "define one, or name a function returning one with --func NAME")
    if len(found) > 1:
        raise UsageError(f"{path} defines {len(found)} kernels ({', '.join(found.values())}); "
                         "choose one with --func NAME")
    return namespace[next(iter(found.values()))]


def _listing(namespace: dict, kinds: tuple) -> str:
    names = [k for k, v in namespace.items() if isinstance(v, kinds) and not k.startswith("_")]
    return "the kernels " + ", ".join(names) if names else "no kernels"


def _run_file(path: str) -> dict:
    """Run the file as a script would run, except its ``if __name__ == "__main__"`` block."""
    directory = os.path.dirname(os.path.abspath(path))
    saved_path, saved_argv = list(sys.path), list(sys.argv)
    sys.path.insert(0, directory)  # its sibling modules import as they would for python FILE
    sys.argv = [path]
    try:
        return runpy.run_path(path, run_name="__tirlite__")
    except (Exception, SystemExit) as err:
        raise UsageError(f"{path}{_where(err, path)}: {_describe(err)}") from err
    finally:
        sys.path[:], sys.argv = saved_path, saved_argv


def _call(path: str, name: str, func: Callable) -> Any:
    try:
        return func()
    except Exception as err:
        raise UsageError(f"{path}{_where(err, path)}: in {name}(): {_describe(err)}") from err


def _where(err: BaseException, path: str) -> str:
    """``:N``, the line of ``path`` where ``err`` passed last, or nothing."""
    target = os.path.abspath(path)
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__)
             if os.path.abspath(f.filename) == target]
    return f":{lines[-1]}" if lines else ""


def _describe(err: BaseException) -> str:
    text = " ".join(str(err).split())  # one line, even for multi-line messages
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _emitted(lib: Any, fmt: str) -> str | bytes:
    if fmt != "obj":
        return lib.get_source(fmt)
    from codegen import machine

    return machine.target_machine(lib.machine_target).emit_object(
        machine.parse(lib.get_source("ll")))


def _write(path: str, data: str | bytes) -> None:
    binary = isinstance(data, bytes)
    if path == "-":
        if binary:
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data if data.endswith("\n") else data + "\n")
        return
    try:
        with open(path, "wb" if binary else "w") as f:
            f.write(data)
    except OSError as err:
        raise UsageError(f"-o {path}: {err.strerror or err}") from None


# ------------------------------------------------------------------ the table and main

#: The subcommands, by name; add a ``Command`` here for a new one.
def _configure_fuzz(p: argparse.ArgumentParser) -> None:
    from .fuzz import cli as fuzz_cli

    fuzz_cli.add_arguments(p)


def run_fuzz(args: argparse.Namespace) -> int:
    """``tirlite fuzz``: the differential fuzzer (``python -m tirlite.fuzz``)."""
    from .fuzz import cli as fuzz_cli

    return fuzz_cli.run(args)


def _configure_tune(p: argparse.ArgumentParser) -> None:
    from . import tune_cli

    tune_cli.configure(p)


def run_tune(args: argparse.Namespace) -> int:
    """``tirlite tune``: search a kernel's schedules (tirlite.meta_schedule)."""
    from . import tune_cli

    return tune_cli.run(args)


COMMANDS: dict[str, Command] = {
    "opt": Command("opt", "run a kernel file through the build pipeline and print the result",
                   _configure_opt, run_opt),
    "fuzz": Command("fuzz", "run the differential fuzzer (random programs, every build "
                    "against a NumPy model)", _configure_fuzz, run_fuzz),
    "tune": Command("tune", "tune a kernel's schedule for the target and keep the records in a "
                    "database", _configure_tune, run_tune),
}


def parser() -> argparse.ArgumentParser:
    """The ``tirlite`` argument parser with every subcommand of ``COMMANDS``."""
    top = _Parser(prog="tirlite", description="tirlite's command-line tools")
    top.add_argument("--version", action="version", version=f"tirlite {tirlite.__version__}")
    top.add_argument("--traceback", action="store_true", help="show tracebacks of errors")
    subs = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for cmd in COMMANDS.values():
        sub = subs.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        sub.add_argument("--traceback", action="store_true", help="show tracebacks of errors")
        cmd.configure(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tirlite`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    show_traceback = "--traceback" in argv
    try:
        args = parser().parse_args(argv)
        if args.command is None:
            raise UsageError(f"expected a command: {', '.join(COMMANDS)} (see 'tirlite --help')")
        return COMMANDS[args.command].run(args)
    except (UsageError, ValueError, TypeError, KeyError, OSError) as err:
        # The compiler's own checks raise ValueError/TypeError naming the problem.
        if show_traceback:
            traceback.print_exc()
        print(f"tirlite: error: {' '.join(str(err).split()) or type(err).__name__}",
              file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # a compiler bug: say so, and how to see where
        if show_traceback:
            traceback.print_exc()
        hint = "" if show_traceback else " (run with --traceback for details)"
        print(f"tirlite: internal error: {_describe(err)}{hint}", file=sys.stderr)
        return 1
