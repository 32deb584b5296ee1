"""What a user would check in third-party rollout files, read straight from the raw files.

Deliberately independent of the importers: plain json, no project code. Prints one JSON
object; the integration tests compare the store's numbers with it.
usage: python3 realFacts.py <external data dir> <test/fixtures/importers/real>
"""
import glob
import json
import os
import sys

ext = sys.argv[1]
real = sys.argv[2]


def swe_agent():
    out = []
    for f in sorted(glob.glob(os.path.join(ext, "swe-agent", "**", "*.traj"), recursive=True)):
        doc = json.load(open(f, encoding="utf-8"))
        traj = doc.get("trajectory")
        info = doc.get("info") or {}
        stats = info.get("model_stats") or {}
        out.append({
            "file": os.path.relpath(f, ext),
            "instance": os.path.basename(f)[: -len(".traj")],
            "has_trajectory": isinstance(traj, list),
            "turns": len(traj) if isinstance(traj, list) else None,
            "exit_status": info.get("exit_status"),
            "tokens_received": stats.get("tokens_received"),
            "tokens_sent": stats.get("tokens_sent"),
            "api_calls": stats.get("api_calls"),
            "timeouts": sum(1 for e in traj if "EXECUTION TIMED OUT" in (e.get("observation") or "")) if isinstance(traj, list) else None,
            "patch": isinstance(info.get("submission"), str) and info["submission"].lstrip().startswith("diff"),
        })
    return out


def tool_calls_of(message):
    calls = message.get("tool_calls")
    if isinstance(calls, str):
        calls = json.loads(calls)
    return len(calls or [])


def verifiers(env):
    rows = [json.loads(line) for line in open(os.path.join(ext, "verifiers", env, "results.jsonl"), encoding="utf-8") if line.strip()]
    per = []
    for r in rows:
        completion = r["completion"]
        per.append({
            "example": r["example_id"] if "example_id" in r else r["id"],
            "reward": r["reward"],
            "assistant_turns": sum(1 for m in completion if m["role"] == "assistant"),
            "tool_calls": sum(tool_calls_of(m) for m in completion if m["role"] == "assistant"),
            "tool_messages": sum(1 for m in completion if m["role"] == "tool"),
            "keys": sorted(r.keys()),
        })
    groups = {}
    for p in per:
        groups.setdefault(p["example"], []).append(p["reward"])
    return {
        "rollouts": len(per),
        "groups": len(groups),
        "mean_reward": sum(p["reward"] for p in per) / len(per),
        "dead_groups": sum(1 for g in groups.values() if len(set(g)) == 1),
        "rows": per,
    }


def mini_swe_agent():
    f = os.path.join(ext, "mini-swe-agent-v2", "astropy__astropy-12907.traj.json")
    doc = json.load(open(f, encoding="utf-8"))
    messages = doc["messages"]
    info = doc["info"]
    return {
        "assistant_messages": sum(1 for m in messages if m["role"] == "assistant"),
        "tool_calls": sum(len(m.get("tool_calls") or []) for m in messages if m["role"] == "assistant"),
        "tool_messages": sum(1 for m in messages if m["role"] == "tool"),
        "exit_status": info.get("exit_status"),
        "api_calls": info["model_stats"]["api_calls"],
    }


def verl_dump(rel):
    rows = [json.loads(line) for line in open(os.path.join(real, rel), encoding="utf-8") if line.strip()]
    base = {"input", "output", "gts", "score", "step", "acc", "pred", "data_source"}
    return {
        "rollouts": len(rows),
        "groups": len({(r["step"], r["input"]) for r in rows}),
        "mean_score": sum(r["score"] for r in rows) / len(rows),
        "correct": sum(1 for r in rows if r["acc"] > 0),
        "rows": [{
            "step": r["step"],
            "prompt": r["input"],
            "response": r["output"],
            "ground_truth": r["gts"],
            "reward": r["score"],
            "correct": r["acc"] > 0,
            "extracted_answer": r["pred"],
            "reward_components": {k: v for k, v in r.items() if k not in base and isinstance(v, (int, float))},
            "extra": {k: v for k, v in r.items() if k not in base and not isinstance(v, (int, float))},
        } for r in rows],
    }


def verl_file_logger(folder):
    """verl's file logger: {"step": N, "data": {metric: value}} per line; every logged number is a point."""
    points = []
    for f in sorted(glob.glob(os.path.join(real, folder, "*.jsonl"))):
        for line in open(f, encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                points += [{"step": r["step"], "metric": k, "value": float(v)} for k, v in r["data"].items() if isinstance(v, (int, float))]
    return points


def verl_plain_multi_turn(rel):
    """A multi-turn dump decoded without special tokens: role headers are bare lines around tool round trips."""
    out = []
    for line in open(os.path.join(real, rel), encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        o = r["output"]
        out.append({
            "reward": r["score"],
            "assistant_turns": 1 + o.count("</tool_response>\nassistant\n"),
            "tool_results": o.count("\nuser\n<tool_response>"),
            "request_id": r["request_id"],
        })
    return out


print(json.dumps({
    "verl_hecate": verl_plain_multi_turn(os.path.join("verl-hecate", "rollouts", "2.jsonl")),
    "verl_sdpo_metrics": verl_file_logger("verl-sdpo-arc"),
    "verl_sdpo": verl_dump(os.path.join("verl-sdpo", "rollouts", "1.jsonl")),
    "swe_agent": swe_agent(),
    "verifiers": {env: verifiers(env) for env in ("math_python", "wordle")},
    "mini_swe_agent": mini_swe_agent(),
}))
