"""`agentctl attest`: the key that signs run attestations, and checking a bundle."""


import subprocess
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agentctl.cli.context import state
from agentctl.cli.options import Flag
from agentctl.cli.output import emit_json, out
from agentctl.domain.errors import BadInput
from agentctl.services.actions.attest import signing_public_key, trusted_key, verify_bundle

app = typer.Typer(help="Attestations: the signing key, and verifying a bundle.",
                  no_args_is_help=True)


@app.command()
def pubkey(
    ctx: typer.Context,
    key: Annotated[Path | None, typer.Option("--key", metavar="FILE", help="The private key "
                   "whose public half to print. (default: the state home's, made on first "
                   "use)")] = None,
    as_json: Annotated[bool, Flag("--json", help="Print JSON: keyid, public key (hex, PEM).")]
    = False,
) -> None:
    """Print the public key that `run attest` signs with (PEM), for verifiers."""

    public = signing_public_key(state(ctx).home.root, key)
    if as_json:
        emit_json({"keyid": public.keyid, "keytype": "ed25519", "scheme": "ed25519",
                   "public": public.hex, "pem": public.pem()})
        return
    typer.echo(public.pem(), nl=False)


@app.command()
def verify(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(metavar="FILE", help="A bundle from `run attest`.")],
    key: Annotated[Path | None, typer.Option("--key", metavar="PUB", help="Pin the signer's "
                   "PEM public key. (default: this state home's key, which shows only that "
                   "this home made the bundle; without one, refused)")] = None,
    ignore_signatures: Annotated[bool, Flag("--insecure-ignore-signatures", help="Check no "
                                            "signature, only that the statements agree with "
                                            "each other (integrity, no trust).")] = False,
    patch: Annotated[Path | None, typer.Option("--patch", metavar="FILE", help="Check the "
                     "statements are about this patch file.")] = None,
    commit: Annotated[str | None, typer.Option("--commit", metavar="REV", help="Check the "
                      "statements are about this commit's tree (in --repo).")] = None,
    repo: Annotated[Path, typer.Option("--repo", metavar="DIR", help="The repository holding "
                    "--commit.")] = Path("."),
    as_json: Annotated[bool, Flag("--json", help="Print JSON.")] = False,
) -> None:
    """Check every envelope's signature, that the bundle is whole (the provenance, each check's
    test result, the run predicate) and, with --patch or --commit, its subjects; say where its
    trust comes from. Exit 3 on the first that fails, naming it."""

    try:
        text = bundle.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read bundle {bundle}: {error}") from None
    if patch is not None and not patch.is_file():
        raise BadInput(f"--patch {patch} is not a file")
    public, trust = trusted_key(state(ctx).home.root, key, ignore_signatures=ignore_signatures)
    tree = _tree(repo, commit) if commit else None
    verified = verify_bundle(text, public, patch=patch, tree=tree)
    if as_json:
        emit_json({"ok": True, "keyid": verified.keyid,
                   "predicateTypes": list(verified.predicate_types),
                   "subjects": [s.as_json() for s in verified.subjects],
                   "checks": list(verified.checks), "trust": trust.as_json()})
        return

    checks = escape(", ".join(verified.checks) or "none")
    out().print(f"{len(verified.predicate_types)} statement(s) verified, complete: provenance, "
                f"the test result of each check ({checks}), the run predicate", soft_wrap=True)
    out().print(f"trust: {escape(trust.says())}", soft_wrap=True)


def _tree(repo: Path, commit: str) -> str:

    found = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q",
                            f"{commit}^{{tree}}"], capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise BadInput(f"--commit {commit} is not a commit in {repo}")
    return found.stdout.strip()
