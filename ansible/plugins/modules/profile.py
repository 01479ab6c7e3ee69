#!/usr/bin/python
# -*- coding: utf-8 -*-
# nictune.nictune.profile: apply or roll back a nictune profile through
# nictunectl. The module runs nictunectl (its JSON output is the interface);
# it never reads or changes the NICs itself.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: profile
short_description: Apply or roll back a nictune NIC tuning profile
version_added: "0.1.0"
description:
  - Applies a nictune profile to network interfaces as one transaction, or
    restores the settings the interfaces had before nictune changed them.
  - The plan (C(nictunectl diff --json)) decides; the task is C(changed)
    only when the plan changes something, so a second run changes nothing.
  - In check mode the plan is all that runs. In diff mode the task shows the
    plan, one line per setting.
  - A profile that does not load fails the task with nictunectl's
    C(file:line:column) message; a plan that refuses (a value outside the
    device's limits, a profile that does not fit the NIC) fails it before
    anything changes.
requirements:
  - nictunectl (the nictune package) on the managed host
options:
  name:
    description:
      - The profile's name (a plain name from the profile search path,
        never a path). Required with I(state=applied).
    type: str
  interfaces:
    description:
      - The interfaces. Empty with I(state=applied) means every NIC the
        profile's C([match]) fits. Required with I(state=rolled_back).
    type: list
    elements: str
    default: []
  state:
    description:
      - C(applied) applies the profile; C(rolled_back) restores the
        original settings of I(interfaces).
    type: str
    choices: [applied, rolled_back]
    default: applied
  profiles_dir:
    description:
      - A directory searched for profiles first (C(nictunectl --profiles-dir)).
        Needs I(direct) to change settings (nictuned has its own).
    type: path
  state_dir:
    description:
      - Where transactions keep the original settings
        (C(nictunectl --state-dir); default C(/run/nictune)). Needs I(direct).
    type: path
  direct:
    description:
      - Run the engine in nictunectl itself (as root) instead of asking
        nictuned over D-Bus.
    type: bool
    default: false
author:
  - nictune maintainers
notes:
  - Supports check mode and diff mode.
  - nictunectl is found on C(PATH) (and C(/usr/sbin), C(/usr/bin)).
"""

EXAMPLES = r"""
- name: X520 ports tuned for throughput
  nictune.nictune.profile:
    name: x520-throughput
    interfaces: [p4p1, p4p2]

- name: Back to the settings they had before
  nictune.nictune.profile:
    interfaces: [p4p1, p4p2]
    state: rolled_back
"""

RETURN = r"""
plan:
  description:
    - The plan as C(nictunectl diff --json) prints it.
  returned: when state=applied
  type: dict
result:
  description:
    - The apply's or rollback's JSON (C(nictunectl apply --json),
      C(nictunectl rollback --json)); absent in check mode or when nothing
      had to change.
  returned: when something was changed
  type: dict
changes:
  description:
    - "One line per setting that changes: C(IFACE KEY: CURRENT -> TARGET)."
  returned: always
  type: list
  elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule


def global_args(params):
    args = []
    if params["direct"]:
        args.append("--direct")
    if params["profiles_dir"]:
        args += ["--profiles-dir", params["profiles_dir"]]
    if params["state_dir"]:
        args += ["--state-dir", params["state_dir"]]
    return args


def value_text(v):
    if v is None:
        return "(unset)"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def plan_changes(plan):
    """The steps that change something: (interface, key, current, target)."""
    out = []
    for iface in plan.get("interfaces", []):
        for step in iface.get("steps", []):
            if step.get("kind") == "change":
                out.append((iface.get("name", ""), step.get("key", ""),
                            step.get("current"), step.get("target")))
    for step in plan.get("system", []):
        if step.get("kind") == "change":
            out.append(("system", step.get("key", ""), step.get("current"),
                        step.get("target")))
    return out


def error_text(rc, out, err):
    text = (err or "").strip()
    if not text:
        try:
            doc = json.loads(out)
            text = doc.get("error", {}).get("text", "") if isinstance(doc, dict) else ""
        except ValueError:
            text = (out or "").strip()
    # nictunectl prefixes its messages with its name.
    if text.startswith("nictunectl: "):
        text = text[len("nictunectl: "):]
    return text or "nictunectl exited with status %d" % rc


def parse_json(module, what, rc, out, err):
    try:
        doc = json.loads(out)
    except ValueError:
        module.fail_json(msg="%s: %s" % (what, error_text(rc, out, err)), rc=rc,
                         stdout=out, stderr=err)
    # A command that fails before it has a result prints {"error": {...}}
    # alone (a profile that does not load: file:line:column in its text).
    if isinstance(doc, dict) and set(doc) == {"error"}:
        module.fail_json(msg=error_text(rc, out, err), rc=rc, stdout=out, stderr=err,
                         error=doc["error"])
    return doc


def applied(module, ctl):
    p = module.params
    if not p["name"]:
        module.fail_json(msg="state=applied needs the profile's name")
    base = [ctl] + global_args(p)
    rc, out, err = module.run_command(base + ["diff", p["name"]] + p["interfaces"] + ["--json"])
    if rc not in (0, 2) or not out.strip().startswith("{"):
        # A profile that does not load, an unknown interface, no daemon:
        # nictunectl's own message (file:line:column for a bad profile).
        module.fail_json(msg=error_text(rc, out, err), rc=rc, stdout=out, stderr=err)
    plan = parse_json(module, "nictunectl diff", rc, out, err)
    refusals = plan.get("refusals", [])
    if refusals:
        module.fail_json(msg="the plan refuses profile %s: %s" % (p["name"], "; ".join(refusals)),
                         plan=plan, changed=False)
    changes = plan_changes(plan)
    lines = ["%s %s: %s -> %s" % (i, k, value_text(c), value_text(t)) for i, k, c, t in changes]
    result = dict(changed=bool(changes), plan=plan, changes=lines)
    if module._diff:
        result["diff"] = dict(
            before_header="current settings",
            after_header="profile %s" % p["name"],
            before="".join("%s %s = %s\n" % (i, k, value_text(c)) for i, k, c, t in changes),
            after="".join("%s %s = %s\n" % (i, k, value_text(t)) for i, k, c, t in changes),
        )
    if not changes or module.check_mode:
        module.exit_json(**result)
    # Only the interfaces the plan covered, so that apply cannot pick others.
    ifaces = p["interfaces"] or [i.get("name") for i in plan.get("interfaces", [])]
    rc, out, err = module.run_command(base + ["apply", p["name"]] + ifaces + ["--json"])
    if not out.strip().startswith("{"):
        module.fail_json(msg=error_text(rc, out, err), rc=rc, stdout=out, stderr=err, **result)
    r = parse_json(module, "nictunectl apply", rc, out, err)
    result["result"] = r
    if rc != 0 or r.get("result") != "applied":
        what = r.get("result", "failed")
        detail = error_text(rc, "", err) if err.strip() else ""
        failed = []
        for i in r.get("interfaces", []):
            for s in i.get("steps", []):
                if s.get("outcome") == "failed":
                    failed.append("%s %s: %s" % (i.get("name", ""), s.get("key", ""),
                                                 (s.get("error") or {}).get("text", "failed")))
        module.fail_json(msg="nictunectl apply %s: %s%s" % (
            p["name"], what, (": " + "; ".join(failed)) if failed else (": " + detail if detail else "")),
            rc=rc, **result)
    module.exit_json(**result)


def rolled_back(module, ctl):
    p = module.params
    if not p["interfaces"]:
        module.fail_json(msg="state=rolled_back needs the interfaces")
    state_dir = p["state_dir"] or "/run/nictune"
    # What nictune saved: an interface without saved originals has nothing
    # to restore (rollback reports nothing_saved).
    saved = [i for i in p["interfaces"]
             if os.path.exists(os.path.join(state_dir, "interfaces", i + ".json"))]
    lines = ["%s: restore the original settings" % i for i in saved]
    result = dict(changed=bool(saved), changes=lines)
    if module._diff:
        result["diff"] = dict(prepared="".join(l + "\n" for l in lines))
    if module.check_mode or not saved:
        module.exit_json(**result)
    rc, out, err = module.run_command([ctl] + global_args(p) + ["rollback"] + p["interfaces"]
                                      + ["--json"])
    if not out.strip().startswith("{"):
        module.fail_json(msg=error_text(rc, out, err), rc=rc, stdout=out, stderr=err)
    r = parse_json(module, "nictunectl rollback", rc, out, err)
    result["result"] = r
    results = [x.get("result") for x in r.get("rollbacks", [])]
    result["changed"] = any(x == "rolled_back" for x in results)
    if rc != 0 or any(x not in ("rolled_back", "nothing_saved") for x in results):
        module.fail_json(msg="nictunectl rollback: %s" % (error_text(rc, "", err) if err.strip()
                                                         else ", ".join(map(str, results))),
                         rc=rc, **result)
    module.exit_json(**result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str"),
            interfaces=dict(type="list", elements="str", default=[]),
            state=dict(type="str", choices=["applied", "rolled_back"], default="applied"),
            profiles_dir=dict(type="path"),
            state_dir=dict(type="path"),
            direct=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    ctl = module.get_bin_path("nictunectl", required=True, opt_dirs=["/usr/sbin", "/usr/bin"])
    if module.params["state"] == "applied":
        applied(module, ctl)
    else:
        rolled_back(module, ctl)


if __name__ == "__main__":
    main()
