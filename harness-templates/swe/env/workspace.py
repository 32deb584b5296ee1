"""The agent's working copy of a task repository, at the task's base commit.

    python3 env/workspace.py --repo REPO --commit BASE --dest DIR [--no-scrub]

With ``scrub_git_history`` on (env/config.json, the default) the copy has no git history:
its ``.git`` is replaced by a fresh repository holding one commit, the base snapshot, with no
remotes, other branches, tags, reflogs, stashes, notes or packed objects of other commits.
Commands like ``git log``/``git show`` then cannot reveal the reference fix from later
commits (the leak by which an agent read and copied the upstream fix), while ``git diff``
and ``git status`` still show the agent's own changes against the base.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_FILE = os.path.join(HERE, "config.json")


def load_config(path: str = CONFIG_FILE) -> dict:
    cfg = {"scrub_git_history": True}
    try:
        with open(path, encoding="utf-8") as f:
            cfg.update(json.load(f).get("environment", {}))
    except FileNotFoundError:
        pass
    return cfg


def _git(cwd, *args, check=True):
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C",
               GIT_AUTHOR_NAME="workspace", GIT_AUTHOR_EMAIL="workspace@localhost",
               GIT_COMMITTER_NAME="workspace", GIT_COMMITTER_EMAIL="workspace@localhost",
               GIT_AUTHOR_DATE="2000-01-01T00:00:00Z", GIT_COMMITTER_DATE="2000-01-01T00:00:00Z")
    r = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", *args], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if check and r.returncode != 0:
        raise RuntimeError("git %s failed in %s: %s" % (" ".join(args), cwd, r.stderr.strip()))
    return r


def prepare_workspace(repo: str, commit: str, dest: str, scrub: bool = None) -> dict:
    """Creates ``dest`` as a checkout of ``repo`` at ``commit``; scrubs its history when asked."""
    if scrub is None:
        scrub = bool(load_config()["scrub_git_history"])
    repo = os.path.abspath(repo)
    dest = os.path.abspath(dest)
    if os.path.exists(dest) and os.listdir(dest):
        raise ValueError("%s exists and is not empty; pick a new folder for the workspace" % dest)
    _git(os.path.dirname(dest) or ".", "clone", "--quiet", "--no-checkout", "--no-hardlinks", repo, dest)
    _git(dest, "checkout", "--quiet", "--detach", commit)
    if scrub:
        scrub_history(dest)
    return {"dest": dest, "commit": commit, "scrubbed": bool(scrub)}


def scrub_history(work: str) -> None:
    """Replaces ``work/.git`` by a one-commit repository of the files as they are now."""
    git_dir = os.path.join(work, ".git")
    if os.path.isfile(git_dir):  # a worktree's .git file points elsewhere: drop it too
        os.unlink(git_dir)
    else:
        shutil.rmtree(git_dir, ignore_errors=True)
    _git(work, "init", "--quiet", "-b", "main")
    _git(work, "add", "-A", "-f")
    _git(work, "commit", "--quiet", "--allow-empty", "-m", "base")
    _git(work, "reflog", "expire", "--expire=now", "--all", check=False)
    _git(work, "gc", "--quiet", "--prune=now", check=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--dest", required=True)
    ap.add_argument("--no-scrub", action="store_true", help="keep git history (leaks later commits to the agent)")
    a = ap.parse_args(argv)
    info = prepare_workspace(a.repo, a.commit, a.dest, scrub=False if a.no_scrub else None)
    print(json.dumps(info))


if __name__ == "__main__":
    sys.exit(main())
