#!/usr/bin/env python3
"""check_fleet.py: the assertions of the Slurm fleet test (test_fleet_slurm.sh).

  check_fleet.py campaign CALHOST FLEET_DIR FULL_STORE STORES:N:PLAN_JSON...
      a fresh campaign: for each array (its stores, shard count and the
      `calhost plan --shards N --json` of its run), every work item of the
      plan is in exactly one shard's report, in the shard the plan gives it, stored or
      skipped as a duplicate key, never failed; the shards' stores are
      disjoint; every stored winner is in the fleet store with its policy;
      `check` says ok; the fleet store holds exactly the keys of the
      unsharded run's store FULL_STORE (exact and portable).
  check_fleet.py rerun CALHOST FLEET_DIR STORES SHARD COUNT_BEFORE
      a resubmitted shard calibrated nothing (every item skipped: already
      calibrated) and the fleet store still holds COUNT_BEFORE profiles, ok.
Exit 0 when every assertion holds; otherwise prints each failure, exit 1.
"""
import json
import subprocess
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def calhost(exe, *args):
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def profiles(exe, store):
    rc, out, err = calhost(exe, "--store", store, "list", "--json")
    if rc != 0:
        fail(f"list {store}: exit {rc}: {err.strip()}")
        return []
    return json.loads(out)


def check_ok(exe, store):
    rc, out, err = calhost(exe, "--store", store, "check", "--json")
    v = json.loads(out) if out.strip() else {}
    if rc != 0 or v.get("status") != "ok":
        fail(f"check {store}: exit {rc}, status {v.get('status')}: {out.strip()} {err.strip()}")
    return v.get("profiles", -1)


def key_of(p):
    k = (p["kind"], p["source"], p["backend"], p["operator"], p["implementation"])
    if p["kind"] == "exact":
        return k + (p["model_digest"], p["processor"], p["thread_count"])
    # a portable profile's source_threads says which item's winner it is:
    # the smallest thread count's, in the fleet as in the unsharded run
    src = [m["value"] for m in p["measurements"] if m["name"] == "source_threads"]
    return k + (tuple(sorted(p["structure"].items())), tuple(src))


def campaign(exe, fleet_dir, full_store, *arrays):
    fleet = f"{fleet_dir}/fleet.txt"
    fleet_profiles = profiles(exe, fleet)
    exact = {key_of(p): p for p in fleet_profiles if p["kind"] == "exact"}
    # exact key -> [(item, winner)]: one entry, unless two arrays of one
    # processor (the test's node types share this host) stored the same key
    winners = {}
    for spec in arrays:
        stores, n, plan_path = spec.split(":")
        n = int(n)
        plan = json.load(open(plan_path))
        items = {(x["backend"], x["workload"], x["threads"]): x["shard"] for x in plan["items"]}
        if len(items) != len(plan["items"]) or not items:
            fail(f"plan: {len(plan['items'])} items, {len(items)} distinct")
        seen = {}
        shard_keys = []
        for s in range(n):
            report = json.load(open(f"{stores}/shard-{s}.json"))
            want = {"index": s, "count": n} if n > 1 else None
            if report.get("shard") != want:
                fail(f"{stores} shard {s}: the report says shard {report.get('shard')}")
            for r in report["results"]:
                item = (r["plugin"], r["workload"], r["threads"])
                if item not in items:
                    fail(f"{stores} shard {s}: item {item} is not in the plan")
                    continue
                if items[item] != s or plan["shards"] != n:
                    fail(f"{stores} shard {s}: item {item} belongs to shard {items[item]}")
                if item in seen:
                    fail(f"{stores}: item {item} in shards {seen[item]} and {s}")
                seen[item] = s
                if r["status"] == "stored":
                    k = r["key"]
                    key = ("exact", "calibrated", r["plugin"], r["operator"], r["implementation"],
                           k["model_digest"], k["processor"], k["thread_count"])
                    winners.setdefault(key, []).append((item, r["winner"]))
                elif not (r["status"] == "skipped" and "same exact key" in (r["message"] or "")):
                    fail(f"{stores} shard {s}: item {item}: {r['status']}: {r['message']}")
            # every key, exact and portable: a workload's portable profile is
            # written by one shard only (the smallest thread count's)
            shard_keys.append({key_of(p)[:5] + key_of(p)[5:-1] if p["kind"] == "portable"
                               else key_of(p)
                               for p in profiles(exe, f"{stores}/shard-{s}.txt")})
            check_ok(exe, f"{stores}/shard-{s}.txt")
        missing = set(items) - set(seen)
        if missing:
            fail(f"{stores}: plan items in no shard: {sorted(missing)}")
        for a in range(n):
            for b in range(a + 1, n):
                both = shard_keys[a] & shard_keys[b]
                if both:
                    fail(f"{stores}: shards {a} and {b} share keys {sorted(both)}")
        print(f"{stores}: {len(seen)} items in {n} shards, "
              f"{sum(len(k) for k in shard_keys)} profiles")
    for key, ws in winners.items():
        if key not in exact:
            fail(f"stored winner of {ws[0][0]} missing from the fleet store")
        elif exact[key]["policy"] not in [w for _, w in ws]:
            fail(f"{ws[0][0]}: fleet policy {exact[key]['policy']!r}, winners {ws}")
    count = check_ok(exe, fleet)
    full = {key_of(p) for p in profiles(exe, full_store)}
    merged = {key_of(p) for p in fleet_profiles}
    if full != merged:
        fail(f"fleet keys differ from the unsharded run's: only fleet {sorted(merged - full)}, "
             f"only unsharded {sorted(full - merged)}")
    if count != len(fleet_profiles):
        fail(f"check counts {count} profiles, list {len(fleet_profiles)}")
    print(f"fleet store: {count} profiles, the unsharded run's keys exactly")


def rerun(exe, fleet_dir, stores, shard, before):
    report = json.load(open(f"{stores}/shard-{shard}.json"))
    for r in report["results"]:
        if r["status"] != "skipped":
            fail(f"rerun of shard {shard}: {r['plugin']} {r['workload']} t={r['threads']}: "
                 f"{r['status']} (expected skipped)")
    count = check_ok(exe, f"{fleet_dir}/fleet.txt")
    if count != int(before):
        fail(f"rerun: the fleet store holds {count} profiles, {before} before")
    print(f"rerun of shard {shard}: {len(report['results'])} items skipped; {count} profiles")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "campaign" and len(sys.argv) >= 6:
        campaign(*sys.argv[2:])
    elif mode == "rerun" and len(sys.argv) == 7:
        rerun(*sys.argv[2:])
    else:
        print(__doc__)
        sys.exit(2)
    sys.exit(1 if failures else 0)
