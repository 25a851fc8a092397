#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""daemonset-docker.py DAEMONSET CONFIGMAP IMAGE OUT_DIR GUEST_DIR

deploy/daemonset.yaml as docker commands, for the node tier's scenario g
(a node whose kubelet is not running: docker stands in for it).  The one
place that knows how a pod spec maps to `docker run`; a field it does not
know fails the translation, so a change to deploy/ cannot go untested.

OUT_DIR gets
  daemonset.sh       bash, sourced by the scenario: ds_init (the init
                     containers, in order), ds_containers, for each container
                     C (its name with - as _) ds_run_C (the `docker run`
                     arguments after `run`, image and command included;
                     --restart=always but for init containers),
                     ds_probe_C (a liveness probe's `docker exec` arguments
                     after the container's name), ds_host_dirs (hostPaths of
                     type DirectoryOrCreate), ds_host_checks ("TYPE PATH" of
                     the others);
  configmap/NAME/    each ConfigMap volume's data as the kubelet projects it
                     (KEY -> ..data/KEY, ..data -> ..VERSION/), which the
                     containers get read-only from GUEST_DIR/configmap/NAME.
The pod's image name "kubemount" (the name kustomization.yaml replaces)
becomes IMAGE.
"""
import os
import shlex
import sys

import yaml

PROPAGATION = {None: "rprivate", "None": "rprivate", "HostToContainer": "rslave", "Bidirectional": "rshared"}
# Fields that only place or account for the pod on a cluster: nothing for docker to do.
SCHEDULING = {"priorityClassName", "tolerations", "nodeSelector", "enableServiceLinks"}
UNITS = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}


def fail(msg):
    sys.exit(f"daemonset-docker: {msg}")


def only(obj, allowed, where):
    extra = set(obj) - set(allowed)
    if extra:
        fail(f"{where}: cannot translate {', '.join(sorted(extra))} to docker")


def memory(value):
    for unit, mult in UNITS.items():
        if str(value).endswith(unit):
            return str(int(str(value)[: -len(unit)]) * mult)
    return str(int(value))


def translate_container(c, pod, volumes, image, guest, init):
    where = f"container {c['name']}"
    only(c, {"name", "image", "imagePullPolicy", "command", "args", "env", "securityContext",
             "resources", "livenessProbe", "volumeMounts"}, where)
    # A DaemonSet's pod restarts its containers (restartPolicy Always); an init container runs once.
    args = ["--name", f"ds-{c['name']}"] + ([] if init else ["--restart=always"])
    if pod.get("hostPID"):
        args.append("--pid=host")
    if "terminationGracePeriodSeconds" in pod:
        args.append(f"--stop-timeout={int(pod['terminationGracePeriodSeconds'])}")
    sec = c.get("securityContext", {})
    only(sec, {"privileged", "readOnlyRootFilesystem"}, f"{where}: securityContext")
    if sec.get("privileged"):
        args.append("--privileged")
    if sec.get("readOnlyRootFilesystem"):
        args.append("--read-only")
    res = c.get("resources", {})
    only(res, {"requests", "limits"}, f"{where}: resources")
    only(res.get("limits", {}), {"memory"}, f"{where}: resources.limits")
    if "memory" in res.get("limits", {}):
        args.append(f"--memory={memory(res['limits']['memory'])}")
    for e in c.get("env", []):
        only(e, {"name", "value"}, f"{where}: env {e.get('name')}")
        args += ["-e", f"{e['name']}={e['value']}"]
    for m in c.get("volumeMounts", []):
        only(m, {"name", "mountPath", "readOnly", "mountPropagation"}, f"{where}: volumeMount {m['name']}")
        if m.get("mountPropagation") not in PROPAGATION:
            fail(f"{where}: mountPropagation {m['mountPropagation']}")
        v = volumes.get(m["name"]) or fail(f"{where}: no volume {m['name']}")
        if "hostPath" in v:
            source = v["hostPath"]["path"]
        else:
            source = f"{guest}/configmap/{v['configMap']['name']}"
        readonly = m.get("readOnly") or "configMap" in v  # the kubelet projects ConfigMaps read-only
        args += ["--mount", f"type=bind,source={source},target={m['mountPath']},"
                 f"bind-propagation={PROPAGATION[m.get('mountPropagation')]}" + (",readonly" if readonly else "")]
    command = c.get("command", []) + c.get("args", [])
    if not command:
        fail(f"{where}: no command (the image's own entrypoint is not translated)")
    args += ["--entrypoint", command[0], image if c["image"] == "kubemount" else c["image"]] + command[1:]
    probe = None
    if "livenessProbe" in c:
        p = c["livenessProbe"]
        only(p, {"exec", "initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold"},
             f"{where}: livenessProbe")
        probe = p["exec"]["command"]
    return args, probe


def configmap_layout(cm, out):
    """cm's data laid out as the kubelet projects a ConfigMap volume."""
    d = os.path.join(out, "configmap", cm["metadata"]["name"])
    version = "..2026_12_02_00_00_00.000000001"
    os.makedirs(os.path.join(d, version))
    for key, value in cm.get("data", {}).items():
        with open(os.path.join(d, version, key), "w") as f:
            f.write(value)
        os.symlink(f"..data/{key}", os.path.join(d, key))
    os.symlink(version, os.path.join(d, "..data"))


def main():
    if len(sys.argv) != 6:
        fail("usage: daemonset-docker.py DAEMONSET CONFIGMAP IMAGE OUT_DIR GUEST_DIR")
    ds_file, cm_file, image, out, guest = sys.argv[1:]
    with open(ds_file) as f:
        ds = yaml.safe_load(f)
    with open(cm_file) as f:
        cm = yaml.safe_load(f)
    if ds.get("kind") != "DaemonSet" or cm.get("kind") != "ConfigMap":
        fail(f"{ds_file} is no DaemonSet or {cm_file} no ConfigMap")
    pod = ds["spec"]["template"]["spec"]
    only(pod, SCHEDULING | {"hostPID", "automountServiceAccountToken", "terminationGracePeriodSeconds",
                            "initContainers", "containers", "volumes"}, "pod spec")
    if pod.get("automountServiceAccountToken", True):
        fail("pod spec: a service account token to mount")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    lines = []
    host_dirs, host_checks = [], []
    for v in volumes.values():
        only(v, {"name", "hostPath", "configMap"}, f"volume {v['name']}")
        if "configMap" in v:
            if v["configMap"]["name"] != cm["metadata"]["name"]:
                fail(f"volume {v['name']}: ConfigMap {v['configMap']['name']} is not {cm_file}'s")
            configmap_layout(cm, out)
        elif v["hostPath"].get("type") == "DirectoryOrCreate":
            host_dirs.append(v["hostPath"]["path"])
        else:
            host_checks.append(f"{v['hostPath'].get('type', 'Any')} {v['hostPath']['path']}")
    q = lambda xs: " ".join(shlex.quote(x) for x in xs)  # noqa: E731
    for kind in ("initContainers", "containers"):
        names = []
        for c in pod.get(kind, []):
            var = c["name"].replace("-", "_")
            names.append(c["name"])
            args, probe = translate_container(c, pod, volumes, image, guest, kind == "initContainers")
            lines.append(f"ds_run_{var}=({q(args)})")
            if probe:
                lines.append(f"ds_probe_{var}=({q(probe)})")
        lines.append(f"ds_{'init' if kind == 'initContainers' else 'containers'}=({q(names)})")
    lines.append(f"ds_host_dirs=({q(host_dirs)})")
    lines.append(f"ds_host_checks=({q(host_checks)})")
    with open(os.path.join(out, "daemonset.sh"), "w") as f:
        f.write(f"# {ds_file} as docker commands (tests/node/daemonset-docker.py)\n")
        f.write("\n".join(lines) + "\n")


main()
