// SPDX-License-Identifier: LGPL-2.1-or-later
// node validate.mjs [--configmap NAME DIR] FILE...: every object of the YAML
// FILEs (kustomization.yaml: its resources and images) checked offline
// against the Kubernetes schemas of kubernetes-models, with no field the
// schema does not know (a typo such as mountPropogation is an error: the
// generated validators alone ignore unknown fields).  --configmap writes the
// data of the ConfigMap NAME into DIR as the kubelet lays a ConfigMap volume
// out (DIR/..VERSION/KEY, DIR/..data -> ..VERSION, DIR/KEY -> ..data/KEY).
// Prints TAP lines "ok"/"not ok" (no plan: deploy-check.sh counts); exit 1
// if any is not ok.
import fs from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";

let failed = 0;
const ok = (good, desc, why) => {
        console.log(`${good ? "ok" : "not ok"} - ${desc}`);
        if (!good) {
                failed++;
                for (const line of String(why).split("\n")) console.log(`# ${line}`);
        }
};

// The module of an apiVersion: "v1" -> kubernetes-models/v1, "apps/v1" -> kubernetes-models/apps/v1.
async function modelOf(apiVersion, kind) {
        if (!/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion)) return null;
        try {
                const mod = await import(`kubernetes-models/${apiVersion}`);
                return mod[kind] ?? null;
        } catch {
                return null;
        }
}

// Runs the model's validator on a proxy of the object that records which
// fields it looked at; a field it never read is one the schema does not
// have.  (Maps such as labels and data are enumerated, which counts.)
function validateStrict(Model, obj) {
        const read = new Map();
        const wrap = (v) => {
                if (v === null || typeof v !== "object") return v;
                read.set(v, read.get(v) ?? new Set());
                return new Proxy(v, {
                        get(t, k) {
                                if (typeof k === "string") read.get(t).add(k);
                                return wrap(t[k]);
                        },
                        ownKeys(t) {
                                for (const k of Reflect.ownKeys(t)) if (typeof k === "string") read.get(t).add(k);
                                return Reflect.ownKeys(t);
                        },
                });
        };
        const errors = [];
        try {
                Model.prototype.validate.call(wrap(obj));
        } catch (e) {
                errors.push(e.message);
        }
        const walk = (v, where) => {
                if (v === null || typeof v !== "object") return;
                for (const k of Object.keys(v)) {
                        const at = Array.isArray(v) ? `${where}[${k}]` : `${where}.${k}`;
                        if (!Array.isArray(v) && !read.get(v)?.has(k)) errors.push(`${at}: unknown field`);
                        else walk(v[k], at);
                }
        };
        walk(obj, "");
        return errors;
}

// What the API server also refuses and the schema cannot say.
function podChecks(obj) {
        const errors = [];
        const spec = obj.spec?.template?.spec;
        if (!spec) return errors;
        const sel = obj.spec.selector?.matchLabels ?? {};
        const labels = obj.spec.template.metadata?.labels ?? {};
        for (const [k, v] of Object.entries(sel))
                if (labels[k] !== v) errors.push(`selector ${k}=${v} does not match the template's labels`);
        const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
        for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])])
                for (const m of c.volumeMounts ?? [])
                        if (!volumes.has(m.name)) errors.push(`container ${c.name}: volume ${m.name} is not defined`);
        return errors;
}

const args = process.argv.slice(2);
let cm = null;
if (args[0] === "--configmap") {
        cm = { name: args[1], dir: args[2] };
        args.splice(0, 3);
}
const objects = [];
for (const file of args) {
        const base = path.basename(file);
        let docs;
        try {
                docs = parseAllDocuments(fs.readFileSync(file, "utf8"));
        } catch (e) {
                ok(false, `${base}: readable`, e.message);
                continue;
        }
        for (const doc of docs) {
                if (doc.errors.length) {
                        ok(false, `${base}: YAML parses`, doc.errors.map((e) => e.message).join("\n"));
                        continue;
                }
                const obj = doc.toJS();
                if (obj === null) continue;
                const what = `${base}: ${obj.kind}/${obj.metadata?.name ?? "?"}`;
                if (obj.kind === "Kustomization") {
                        const missing = (obj.resources ?? []).filter(
                                (r) => !fs.existsSync(path.join(path.dirname(file), r)));
                        ok(missing.length === 0, `${base}: every resource exists`, `missing: ${missing}`);
                        objects.push({ file, obj });
                        continue;
                }
                const Model = await modelOf(obj.apiVersion, obj.kind);
                if (!Model) {
                        ok(false, what, `no Kubernetes schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`);
                        continue;
                }
                const errors = [...validateStrict(Model, obj), ...podChecks(obj)];
                ok(errors.length === 0, `${what} validates against the ${obj.apiVersion} schema`, errors.join("\n"));
                objects.push({ file, obj });
        }
}

// The kustomization's images: entry names the image every container runs.
const kust = objects.find((o) => o.obj.kind === "Kustomization");
if (kust) {
        const names = new Set((kust.obj.images ?? []).map((i) => i.name));
        for (const { obj } of objects) {
                const spec = obj.spec?.template?.spec;
                for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])])
                        ok(names.has(c.image), `${obj.kind}/${obj.metadata.name} container ${c.name}: image "${c.image}" is set by the kustomization`,
                           `images: names ${[...names]}`);
                const ns = obj.metadata?.namespace;
                if (obj.kind !== "Namespace" && ns !== undefined)
                        ok(ns === kust.obj.namespace, `${obj.kind}/${obj.metadata.name}: namespace ${ns} is the kustomization's`, "");
        }
}

if (cm) {
        const found = objects.find((o) => o.obj.kind === "ConfigMap" && o.obj.metadata.name === cm.name);
        ok(!!found, `ConfigMap ${cm.name} exists`, "not in the files given");
        if (found) {
                const version = "..2026_01_01_00_00_00.1";
                fs.mkdirSync(path.join(cm.dir, version), { recursive: true });
                for (const [k, v] of Object.entries(found.obj.data ?? {})) {
                        fs.writeFileSync(path.join(cm.dir, version, k), v);
                        fs.symlinkSync(`..data/${k}`, path.join(cm.dir, k));
                }
                fs.symlinkSync(version, path.join(cm.dir, "..data"));
        }
}
process.exit(failed ? 1 : 0);
