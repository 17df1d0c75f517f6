"""Stock kubectl (1.27 and 1.33) against Shepherd.

Every test runs once per kubectl version, each version in its own namespace. Shepherd has
no controllers or nodes yet: pods stay Pending, deployments are never rolled out and a
deleted namespace stays Terminating.
"""

import json
import os
import re

import pytest
import yaml

from conftest import KUBECTL_VERSIONS, MANIFESTS

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

# kubectl 1.33 against a 1.31 server prints a version-skew warning on stderr.
SKEW_WARNING = re.compile(r"^WARNING: version difference between client.*$", re.M)

EXAMPLES = [
    # (file, kind/name as printed by kubectl)
    ("pod.yaml", "pod/web"),
    ("configmap.yaml", "configmap/app-config"),
    ("secret.yaml", "secret/app-secret"),
    ("service.yaml", "service/web"),
    ("deployment.yaml", "deployment.apps/web-deploy"),
    ("replicaset.yaml", "replicaset.apps/web-rs"),
    ("lease.yaml", "lease.coordination.k8s.io/leader"),
    ("podtemplate.yaml", "podtemplate/web-template"),
    ("serviceaccount.yaml", "serviceaccount/builder"),
    ("event.yaml", "event/web.manual"),
]


def header(out):
    """Column titles of the first line of a kubectl table."""
    first = out.splitlines()[0]
    return re.split(r"\s{2,}", first.strip())


def rows(out):
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines()[1:] if line.strip()]


def stderr_clean(err):
    return SKEW_WARNING.sub("", err).strip()


class Ctx:
    def __init__(self, kubectl, version, ns):
        self._kubectl = kubectl
        self.version = version
        self.ns = ns

    def __call__(self, *args, input=None):
        """kubectl in the version's namespace."""
        return self._kubectl(self.version, "-n", self.ns, *args, input=input)

    def raw(self, *args, input=None):
        """kubectl without -n."""
        return self._kubectl(self.version, *args, input=input)

    def ok(self, *args, input=None):
        rc, out, err = self(*args, input=input)
        assert rc == 0, "kubectl %s failed (rc=%d): %s" % (" ".join(args), rc, err)
        return out

    def jsonpath(self, kind_name, path):
        return self.ok("get", *kind_name.split(), "-o", "jsonpath=" + path)


@pytest.fixture(scope="module", params=KUBECTL_VERSIONS, ids=lambda v: "kubectl" + v)
def k(request, kubectl, server):
    version = request.param
    ns = "e2e-kubectl-" + version.replace(".", "")
    # kubectl >= 1.32 sends `create namespace` as protobuf.
    rc, out, err = kubectl(version, "create", "namespace", ns)
    assert rc == 0, err
    assert out.strip() == "namespace/%s created" % ns
    return Ctx(kubectl, version, ns)


@pytest.fixture(scope="module")
def examples(k):
    """Create every example manifest with `kubectl create -f`; returns {file: (rc,out,err)}."""
    results = {}
    for fname, _ in EXAMPLES:
        path = os.path.join(MANIFESTS, fname)
        if fname == "event.yaml":
            # A core/v1 Event's involvedObject.namespace must match the Event's namespace.
            with open(path) as f:
                ev = yaml.safe_load(f)
            ev["involvedObject"]["namespace"] = k.ns
            results[fname] = k("create", "-f", "-", input=yaml.safe_dump(ev))
        else:
            results[fname] = k("create", "-f", path)
    return results


# --------------------------------------------------------------------------- discovery


def test_api_versions_lists_each_group_version_once(k):
    # authorization.k8s.io/v1 (three review kinds) used to be listed three times.
    rc, out, err = k.raw("api-versions")
    assert rc == 0, err
    versions = out.split()
    assert "authorization.k8s.io/v1" in versions and "v1" in versions
    assert len(versions) == len(set(versions)), sorted(versions)


# --------------------------------------------------------------------------- create/apply


def test_create_namespace_listed(k):
    out = k.raw("get", "namespace", k.ns)[1]
    assert header(out) == ["NAME", "STATUS", "AGE"]
    assert rows(out)[0][:2] == [k.ns, "Active"]


@pytest.mark.parametrize("fname,printed", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_create_from_manifest(k, examples, fname, printed):
    rc, out, err = examples[fname]
    assert rc == 0, err
    assert out.strip() == printed + " created"
    # and it is really there
    rc, out, err = k("get", printed, "-o", "name")
    assert rc == 0, err
    assert out.strip() == printed


def test_create_existing_fails(k, examples):
    rc, out, err = k("create", "-f", os.path.join(MANIFESTS, "configmap.yaml"))
    assert rc == 1
    assert 'Error from server (AlreadyExists)' in err
    assert 'configmaps "app-config" already exists' in err


APPLY_V1 = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: applied
  labels: {app: applied}
spec:
  replicas: 1
  selector: {matchLabels: {app: applied}}
  template:
    metadata: {labels: {app: applied}}
    spec:
      containers:
      - name: app
        image: nginx:1.25
      - name: sidecar
        image: busybox:1.36
        command: ["sleep", "infinity"]
"""


def test_apply_created_unchanged_configured(k, tmp_path):
    m1 = tmp_path / "apply-v1.yaml"
    m1.write_text(APPLY_V1)
    rc, out, err = k("apply", "-f", str(m1))
    assert rc == 0, err
    assert out.strip() == "deployment.apps/applied created"
    assert k.jsonpath("deployment applied", "{.metadata.generation}") == "1"
    last = k.jsonpath("deployment applied",
                      r"{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}")
    assert json.loads(last)["spec"]["replicas"] == 1

    rc, out, err = k("apply", "-f", str(m1))
    assert rc == 0, err
    assert out.strip() == "deployment.apps/applied unchanged"

    m2 = tmp_path / "apply-v2.yaml"
    m2.write_text(APPLY_V1.replace("replicas: 1", "replicas: 4")
                  .replace("nginx:1.25", "nginx:1.26")
                  .replace("labels: {app: applied}\n", "labels: {app: applied, stage: two}\n", 1))
    rc, out, err = k("apply", "-f", str(m2))
    assert rc == 0, err
    assert out.strip() == "deployment.apps/applied configured"
    assert k.jsonpath("deployment applied", "{.spec.replicas}") == "4"
    assert k.jsonpath("deployment applied",
                      "{.spec.template.spec.containers[*].image}") == "nginx:1.26 busybox:1.36"
    assert k.jsonpath("deployment applied", "{.spec.template.spec.containers[*].name}") \
        == "app sidecar"
    assert k.jsonpath("deployment applied", "{.metadata.labels.stage}") == "two"
    assert k.jsonpath("deployment applied", "{.metadata.generation}") == "2"

    # re-applying the modified manifest is a no-op again
    rc, out, err = k("apply", "-f", str(m2))
    assert rc == 0, err
    assert out.strip() == "deployment.apps/applied unchanged"


def test_apply_removes_field_dropped_from_manifest(k, tmp_path):
    m = tmp_path / "cm.yaml"
    m.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-cm\n"
                 "data:\n  a: '1'\n  b: '2'\n")
    rc, out, err = k("apply", "-f", str(m))
    assert rc == 0 and out.strip() == "configmap/applied-cm created", err
    m.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-cm\n"
                 "data:\n  a: '1'\n")
    rc, out, err = k("apply", "-f", str(m))
    assert rc == 0 and out.strip() == "configmap/applied-cm configured", err
    assert json.loads(k.jsonpath("configmap applied-cm", "{.data}")) == {"a": "1"}


# --------------------------------------------------------------------------- get


def test_get_pods_table(k, examples):
    out = k.ok("get", "pods")
    assert header(out) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    web = [r for r in rows(out) if r[0] == "web"]
    assert len(web) == 1
    assert web[0][1:4] == ["0/1", "Pending", "0"]
    assert re.fullmatch(r"\d+[smhd]", web[0][4]), web[0]


def test_get_pods_wide(k, examples):
    out = k.ok("get", "pods", "-o", "wide")
    assert header(out) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                           "NOMINATED NODE", "READINESS GATES"]
    web = [r for r in rows(out) if r[0] == "web"][0]
    assert web[5:] == ["<none>", "<none>", "<none>", "<none>"]


def test_get_nodes_table(k):
    node = "e2e-node-" + k.version.replace(".", "")
    manifest = ("apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n"
                "    node-role.kubernetes.io/worker: ''\n" % node)
    rc, out, err = k.raw("create", "-f", "-", input=manifest)
    assert rc == 0, err
    assert out.strip() == "node/%s created" % node
    out = k.ok("get", "nodes")
    assert header(out) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    row = [r for r in rows(out) if r[0] == node]
    assert len(row) == 1
    assert row[0][2] == "worker"


def test_get_services_table(k, examples):
    out = k.ok("get", "services")
    assert header(out) == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    web = [r for r in rows(out) if r[0] == "web"][0]
    assert web[1] == "ClusterIP"
    assert re.fullmatch(r"10\.\d+\.\d+\.\d+", web[2]), web
    assert web[3] == "<none>"
    assert web[4] == "80/TCP"


def test_get_deployments_table(k, examples):
    out = k.ok("get", "deployments")
    assert header(out) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    row = [r for r in rows(out) if r[0] == "web-deploy"][0]
    assert row[1:4] == ["0/3", "0", "0"]


def test_get_configmaps_table(k, examples):
    out = k.ok("get", "configmaps")
    assert header(out) == ["NAME", "DATA", "AGE"]
    row = [r for r in rows(out) if r[0] == "app-config"][0]
    assert row[1] == "2"


def test_get_secrets_table(k, examples):
    out = k.ok("get", "secrets")
    assert header(out) == ["NAME", "TYPE", "DATA", "AGE"]
    row = [r for r in rows(out) if r[0] == "app-secret"][0]
    assert row[1:3] == ["Opaque", "2"]


def test_get_other_tables(k, examples):
    out = k.ok("get", "replicasets")
    assert header(out) == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    out = k.ok("get", "leases")
    assert header(out) == ["NAME", "HOLDER", "AGE"]
    assert [r for r in rows(out) if r[0] == "leader"][0][1] == "node-a"
    out = k.ok("get", "serviceaccounts")
    assert header(out) == ["NAME", "SECRETS", "AGE"]
    out = k.ok("get", "podtemplates")
    assert header(out) == ["NAME", "CONTAINERS", "IMAGES", "POD LABELS"]


def test_get_yaml(k, examples):
    obj = yaml.safe_load(k.ok("get", "pod", "web", "-o", "yaml"))
    assert obj["kind"] == "Pod"
    assert obj["apiVersion"] == "v1"
    assert obj["metadata"]["name"] == "web"
    assert obj["metadata"]["namespace"] == k.ns
    assert obj["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert obj["status"]["phase"] == "Pending"


def test_get_json(k, examples):
    obj = json.loads(k.ok("get", "configmap", "app-config", "-o", "json"))
    assert obj["kind"] == "ConfigMap"
    assert obj["data"]["LOG_LEVEL"] == "info"
    assert obj["data"]["config.yaml"] == "port: 8080\n"
    assert obj["metadata"]["resourceVersion"].isdigit()
    lst = json.loads(k.ok("get", "configmaps", "-o", "json"))
    assert lst["kind"] == "List"
    assert "app-config" in [i["metadata"]["name"] for i in lst["items"]]


def test_get_secret_data_is_base64(k, examples):
    obj = json.loads(k.ok("get", "secret", "app-secret", "-o", "json"))
    assert obj["data"] == {"password": "aHVudGVyMg==", "username": "YWRtaW4="}
    assert "stringData" not in obj


def test_get_name(k, examples):
    out = k.ok("get", "pods,services", "-o", "name")
    lines = out.split()
    assert "pod/web" in lines
    assert "service/web" in lines


def test_get_all_namespaces(k, examples):
    out = k.ok("get", "pods", "-A")
    assert header(out) == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [k.ns, "web"] in [r[:2] for r in rows(out)]


def test_get_label_selector(k, examples):
    out = k.ok("get", "pods,configmaps,secrets,services", "-l", "app=web", "-o", "name")
    assert sorted(out.split()) == sorted(
        ["pod/web", "configmap/app-config", "secret/app-secret", "service/web"])
    rc, out, err = k("get", "pods", "-l", "app=nope")
    assert rc == 0
    assert out == ""
    assert "No resources found in %s namespace." % k.ns in err


def test_get_show_labels(k, examples):
    out = k.ok("get", "pods", "web", "--show-labels")
    assert header(out) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "LABELS"]
    assert rows(out)[0][-1] == "app=web,tier=frontend"


def test_get_missing(k):
    rc, out, err = k("get", "pod", "no-such-pod")
    assert rc == 1
    assert 'Error from server (NotFound): pods "no-such-pod" not found' in err


def test_get_all(k, examples):
    out = k.ok("get", "all")
    names = [r[0] for r in rows(out)]
    assert "pod/web" in names
    assert "service/web" in names
    assert "deployment.apps/web-deploy" in names
    assert "replicaset.apps/web-rs" in names
    # configmaps are not in the "all" category
    assert not any(n.startswith("configmap/") for n in names)


def test_describe_pod(k, examples):
    out = k.ok("describe", "pod", "web")
    fields = dict(re.findall(r"^([A-Za-z][A-Za-z -]*):\s+(.*)$", out, re.M))
    assert fields["Name"] == "web"
    assert fields["Namespace"] == k.ns
    assert fields["Status"] == "Pending"
    assert fields["QoS Class"] == "BestEffort"
    assert "app=web" in out and "tier=frontend" in out
    assert re.search(r"^\s+Image:\s+nginx:1\.25$", out, re.M)
    assert re.search(r"^\s+Port:\s+80/TCP$", out, re.M)
    assert "Events:" in out


def test_describe_deployment(k, examples):
    out = k.ok("describe", "deployment", "web-deploy")
    assert re.search(r"^Name:\s+web-deploy$", out, re.M)
    assert re.search(r"^StrategyType:\s+RollingUpdate$", out, re.M)
    assert re.search(r"^Replicas:\s+3 desired", out, re.M)


# --------------------------------------------------------------------------- delete


def test_delete(k):
    rc, out, err = k("create", "configmap", "doomed", "--from-literal=a=b")
    assert rc == 0, err
    rc, out, err = k("delete", "configmap", "doomed")
    assert rc == 0, err
    assert out.strip() == 'configmap "doomed" deleted'
    rc, out, err = k("get", "configmap", "doomed")
    assert rc == 1
    assert 'configmaps "doomed" not found' in err


def test_delete_unbound_pod_waits_and_is_gone(k):
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: doomed-pod\nspec:\n  containers:\n"
           "  - name: c\n    image: busybox\n")
    rc, out, err = k("create", "-f", "-", input=pod)
    assert rc == 0, err
    rc, out, err = k("delete", "pod", "doomed-pod", "--timeout=20s")
    assert rc == 0, err
    assert out.strip() == 'pod "doomed-pod" deleted'
    rc, out, err = k("get", "pod", "doomed-pod")
    assert rc == 1 and "not found" in err


def test_delete_by_label(k):
    for i in range(3):
        rc, out, err = k("create", "configmap", "bulk-%d" % i, "--from-literal=a=b")
        assert rc == 0, err
        k.ok("label", "configmap", "bulk-%d" % i, "batch=one")
    rc, out, err = k("delete", "configmaps", "-l", "batch=one")
    assert rc == 0, err
    assert sorted(out.strip().splitlines()) == [
        'configmap "bulk-%d" deleted' % i for i in range(3)]
    rc, out, err = k("get", "configmaps", "-l", "batch=one", "-o", "name")
    assert rc == 0 and out == ""


def test_delete_namespace_terminating(k):
    ns = k.ns + "-gone"
    rc, out, err = k.raw("create", "namespace", ns)
    assert rc == 0, err
    rc, out, err = k.raw("delete", "namespace", ns, "--wait=false")
    assert rc == 0, err
    assert out.strip() == 'namespace "%s" deleted' % ns
    out = k.ok("get", "namespace", ns, "-o", "jsonpath={.status.phase}")
    assert out == "Terminating"


# --------------------------------------------------------------------------- discovery etc.


def test_api_resources(k):
    out = k.ok("api-resources")
    assert header(out) == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    lines = out.splitlines()

    def row(name, apiversion):
        for line in lines[1:]:
            cols = line.split()
            if cols[0] == name and apiversion in cols:
                return cols
        raise AssertionError("no %s %s row in:\n%s" % (name, apiversion, out))

    assert row("pods", "v1") == ["pods", "po", "v1", "true", "Pod"]
    assert row("deployments", "apps/v1") == ["deployments", "deploy", "apps/v1", "true",
                                             "Deployment"]
    assert row("leases", "coordination.k8s.io/v1") == ["leases", "coordination.k8s.io/v1",
                                                       "true", "Lease"]
    assert row("events", "events.k8s.io/v1") == ["events", "ev", "events.k8s.io/v1", "true",
                                                 "Event"]
    assert row("endpointslices", "discovery.k8s.io/v1") == [
        "endpointslices", "discovery.k8s.io/v1", "true", "EndpointSlice"]
    assert row("namespaces", "v1") == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert row("services", "v1") == ["services", "svc", "v1", "true", "Service"]


def test_api_versions(k):
    out = k.ok("api-versions").split()
    for gv in ("v1", "apps/v1", "coordination.k8s.io/v1", "events.k8s.io/v1"):
        assert gv in out


def test_explain_pod_spec(k):
    out = k.ok("explain", "pod.spec")
    assert re.search(r"^KIND:\s+Pod$", out, re.M)
    assert re.search(r"^\s+containers\s+<\[\]Container> -required-", out, re.M)
    assert re.search(r"^\s+restartPolicy\s+<string>", out, re.M)


def test_explain_deployment_strategy(k):
    out = k.ok("explain", "deployment.spec.strategy")
    assert re.search(r"^KIND:\s+Deployment$", out, re.M)
    assert re.search(r"^GROUP:\s+apps$", out, re.M)
    assert re.search(r"^\s+rollingUpdate\s+<RollingUpdateDeployment>", out, re.M)
    assert re.search(r"^\s+type\s+<string>", out, re.M)


def test_version(k):
    # kubectl 1.27 still defaults to the long Go-struct format; --short is the 1.28+ default
    args = ["version", "--short"] if k.version == "1.27" else ["version"]
    rc, out, err = k.raw(*args)
    assert rc == 0, err
    assert re.search(r"^Client Version: v%s\.\d+$" % re.escape(k.version), out, re.M)
    assert re.search(r"^Server Version: v1\.\d+\.\d+", out, re.M), out
    info = json.loads(k.ok("version", "-o", "json"))
    assert re.fullmatch(r"v1\.\d+\.\d+([-+].*)?", info["serverVersion"]["gitVersion"])
    assert info["serverVersion"]["major"] == "1"


# --------------------------------------------------------------------------- imperative


def test_create_configmap_from_literal(k):
    rc, out, err = k("create", "configmap", "literal", "--from-literal=greeting=hello",
                     "--from-literal=count=3")
    assert rc == 0, err
    assert out.strip() == "configmap/literal created"
    assert k.jsonpath("configmap literal", "{.data.greeting}") == "hello"
    assert k.jsonpath("configmap literal", "{.data.count}") == "3"


def test_create_secret_generic(k):
    rc, out, err = k("create", "secret", "generic", "creds", "--from-literal=user=admin",
                     "--from-literal=pw=s3cr3t")
    assert rc == 0, err
    assert out.strip() == "secret/creds created"
    assert k.jsonpath("secret creds", "{.type}") == "Opaque"
    assert k.jsonpath("secret creds", "{.data.pw}") == "czNjcjN0"
    assert k.jsonpath("secret creds", "{.data.user}") == "YWRtaW4="


def test_label_and_annotate(k):
    k.ok("create", "configmap", "tagged", "--from-literal=a=1")
    rc, out, err = k("label", "configmap", "tagged", "color=blue")
    assert rc == 0, err
    assert out.strip() == "configmap/tagged labeled"
    rc, out, err = k("annotate", "configmap", "tagged", "note=hello world")
    assert rc == 0, err
    # kubectl 1.27 prints "annotate", later versions "annotated"
    assert re.fullmatch(r"configmap/tagged annotated?", out.strip())
    assert k.jsonpath("configmap tagged", "{.metadata.labels.color}") == "blue"
    assert k.jsonpath("configmap tagged", "{.metadata.annotations.note}") == "hello world"

    rc, out, err = k("label", "configmap", "tagged", "color=red")
    assert rc == 1
    assert "'color' already has a value (blue), and --overwrite is false" in err
    k.ok("label", "configmap", "tagged", "color=red", "--overwrite")
    assert k.jsonpath("configmap tagged", "{.metadata.labels.color}") == "red"
    k.ok("label", "configmap", "tagged", "color-")
    assert k.jsonpath("configmap tagged", "{.metadata.labels}") in ("", "{}")


def test_patch_strategic_default(k, examples):
    rc, out, err = k("patch", "deployment", "web-deploy", "-p",
                     '{"spec":{"template":{"spec":{"containers":'
                     '[{"name":"nginx","image":"nginx:1.27"}]}}}}')
    assert rc == 0, err
    assert out.strip() == "deployment.apps/web-deploy patched"
    # strategic merge: containers merged by name, not replaced
    assert k.jsonpath("deployment web-deploy",
                      "{.spec.template.spec.containers[*].name}") == "nginx"
    assert k.jsonpath("deployment web-deploy",
                      "{.spec.template.spec.containers[0].image}") == "nginx:1.27"
    # add a second container: the list is merged, the first container stays
    k.ok("patch", "deployment", "web-deploy", "-p",
         '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}')
    names = k.jsonpath("deployment web-deploy",
                       "{.spec.template.spec.containers[*].name}").split()
    assert sorted(names) == ["nginx", "side"]


def test_patch_merge(k):
    k.ok("create", "configmap", "mergeme", "--from-literal=a=1", "--from-literal=b=2")
    rc, out, err = k("patch", "configmap", "mergeme", "--type=merge",
                     "-p", '{"data":{"a":null,"c":"3"}}')
    assert rc == 0, err
    assert out.strip() == "configmap/mergeme patched"
    assert json.loads(k.jsonpath("configmap mergeme", "{.data}")) == {"b": "2", "c": "3"}


def test_patch_json(k):
    k.ok("create", "configmap", "jsonme", "--from-literal=a=1", "--from-literal=b=2")
    rc, out, err = k("patch", "configmap", "jsonme", "--type=json", "-p",
                     '[{"op":"replace","path":"/data/a","value":"one"},'
                     '{"op":"remove","path":"/data/b"},'
                     '{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]')
    assert rc == 0, err
    assert out.strip() == "configmap/jsonme patched"
    assert json.loads(k.jsonpath("configmap jsonme", "{.data}")) == {"a": "one"}
    assert k.jsonpath("configmap jsonme", "{.metadata.labels.x}") == "y"
    # a failing test op is an error, nothing changes
    rc, out, err = k("patch", "configmap", "jsonme", "--type=json", "-p",
                     '[{"op":"test","path":"/data/a","value":"nope"},'
                     '{"op":"replace","path":"/data/a","value":"two"}]')
    assert rc == 1
    # 422 Invalid from the server; kubectl prints "The request is invalid: <message>"
    assert "The request is invalid" in err and "test" in err, err
    assert k.jsonpath("configmap jsonme", "{.data.a}") == "one"


def test_patch_no_change(k):
    k.ok("create", "configmap", "same", "--from-literal=a=1")
    rc, out, err = k("patch", "configmap", "same", "-p", '{"data":{"a":"1"}}')
    assert rc == 0, err
    assert out.strip() == "configmap/same patched (no change)"


# --------------------------------------------------------------------------- validation


BAD_NAME_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: Bad_Name
spec:
  containers:
  - name: c
    image: busybox
"""

UNKNOWN_FIELD_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: typo-%s
spec:
  containers:
  - name: c
    image: busybox
    imagee: busybox:1.36
"""


def test_invalid_name(k):
    rc, out, err = k("create", "-f", "-", input=BAD_NAME_POD)
    assert rc == 1
    assert 'The Pod "Bad_Name" is invalid' in err
    assert 'metadata.name: Invalid value: "Bad_Name"' in err
    assert "RFC 1123" in err


def test_unknown_field_strict_by_default(k):
    rc, out, err = k("create", "-f", "-", input=UNKNOWN_FIELD_POD % "strict")
    assert rc == 1
    assert 'unknown field "spec.containers[0].imagee"' in err
    rc, out, err = k("get", "pod", "typo-strict")
    assert rc == 1 and "not found" in err


def test_unknown_field_validate_false(k):
    rc, out, err = k("create", "--validate=false", "-f", "-", input=UNKNOWN_FIELD_POD % "lax")
    assert rc == 0, err
    assert out.strip() == "pod/typo-lax created"
    obj = json.loads(k.ok("get", "pod", "typo-lax", "-o", "json"))
    assert "imagee" not in obj["spec"]["containers"][0]
    assert obj["spec"]["containers"][0]["image"] == "busybox"


def test_apply_unknown_field_strict(k):
    rc, out, err = k("apply", "-f", "-", input=UNKNOWN_FIELD_POD % "apply")
    assert rc == 1
    assert 'unknown field "spec.containers[0].imagee"' in err


def test_dry_run_server(k):
    rc, out, err = k("create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server")
    assert rc == 0, err
    assert out.strip() == "configmap/dry created (server dry run)"
    rc, out, err = k("get", "configmap", "dry")
    assert rc == 1 and "not found" in err


def test_server_side_apply(k):
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n  b: '2'\n"
    rc, out, err = k("apply", "--server-side", "-f", "-", input=cm)
    assert rc == 0, err
    assert out.strip() == "configmap/ssa serverside-applied"
    # Fields the applier stops setting are removed; changed ones are updated.
    rc, out, err = k("apply", "--server-side", "-f", "-", input=cm.replace("'1'", "'3'").replace("  b: '2'\n", ""))
    assert rc == 0, err
    assert k.jsonpath("configmap ssa", "{.data}") == '{"a":"3"}'
    # Another manager changes a.data.a: re-applying conflicts until forced.
    rc, out, err = k("patch", "configmap", "ssa", "-p", '{"data":{"a":"9"}}')
    assert rc == 0, err
    rc, out, err = k("apply", "--server-side", "-f", "-", input=cm.replace("'1'", "'3'"))
    assert rc != 0
    assert 'conflict with "kubectl-patch"' in err and ".data.a" in err, err
    rc, out, err = k("apply", "--server-side", "--force-conflicts", "-f", "-", input=cm.replace("'1'", "'3'"))
    assert rc == 0, err
    assert k.jsonpath("configmap ssa", "{.data.a}") == "3"
    rc, out, err = k("get", "configmap", "ssa", "-o", "yaml", "--show-managed-fields")
    assert rc == 0, err
    assert "operation: Apply" in out and "manager: kubectl" in out, out
