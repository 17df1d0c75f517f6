"""Not collected yet: the two "Update Demo" [Conformance] tests of test/e2e/kubectl/kubectl.go
(kubernetes/kubernetes v1.32), "Update Demo should create and stop a replication controller"
and "Update Demo should scale a replication controller", ported in full.

Why pending: their validator (getUDData) reads each pod's data.json through the API server's
pods/proxy subresource (`/api/v1/namespaces/NS/pods/NAME/proxy/data.json`), which Shepherd
does not serve yet (issue 20, proxying). The file name does not match pytest's `test_*.py`,
so the suite does not collect it; conformance/not_ported.tsv lists both tests. Once pods/proxy
exists, rename it to conformance/test_kubectl_update_demo.py.

They use test_kubectl.py's session fixture ``kubectl`` (the real kubectl as the cluster
admin) and, from the manifests, ``nautilus-rc.yaml.in`` of
test/fixtures/doc-yaml/user-guide/update-demo/, reproduced below.

Image substitution: imageutils.Nautilus (registry.k8s.io/e2e-test-images/nautilus: a web
server on port 80 serving data.json = {"image": "nautilus.jpg"}) has no offline counterpart;
it becomes BUSYBOX_IMAGE with a container command that writes the same data.json and serves
it on port 80 with busybox httpd. That command is the only change to nautilus-rc.yaml.in
besides the image; validateController compares the pods' image with this substitute.
"""

import contextlib
import json
import os
import time

from kubernetes.client.rest import ApiException

from e2e_framework import (BUSYBOX_IMAGE, POD_START_TIMEOUT, SINGLE_CALL_TIMEOUT, by,
                           conformance, describe_error, fail, logf)
from test_kubectl import kubectl, kubectl_framework  # noqa: F401 (the session fixture)

UPDATE_DEMO_SELECTOR = "name=update-demo"

NAUTILUS_IMAGE = BUSYBOX_IMAGE  # imageutils.GetE2EImage(imageutils.Nautilus), see the doc

# test/fixtures/doc-yaml/user-guide/update-demo/nautilus-rc.yaml.in, {{.NautilusImage}}
# substituted; the command makes the stand-in serve what the nautilus image serves (see the
# module doc).
NAUTILUS_RC_YAML = """apiVersion: v1
kind: ReplicationController
metadata:
  name: update-demo-nautilus
spec:
  replicas: 2
  selector:
    name: update-demo
    version: nautilus
  template:
    metadata:
      labels:
        name: update-demo
        version: nautilus
    spec:
      containers:
      - image: %s
        name: update-demo
        command:
        - /bin/sh
        - -c
        - |
          mkdir -p /html && printf '{\\n  "image": "nautilus.jpg"\\n}\\n' >/html/data.json && exec httpd -f -p 80 -h /html
        ports:
        - containerPort: 80
          protocol: TCP
""" % NAUTILUS_IMAGE


@contextlib.contextmanager
def deferred(cleanup):
    """Go's `defer cleanup()`: runs after the body, also when it failed (then the body's
    failure is the one reported)."""
    try:
        yield
    except BaseException:
        try:
            cleanup()
        except BaseException as err:  # pytest.fail's exception is not an Exception
            logf("deferred cleanup failed as well: %s", err)
        raise
    cleanup()


def cleanup_kubectl_inputs(kubectl, file_contents, ns, *selectors):
    """cleanupKubectlInputs: `kubectl delete --grace-period=0 --force -f -`, then
    assertCleanup."""
    by("using delete to clean up resources")
    kubectl.run_kubectl_or_die_input(ns, file_contents, "delete", "--grace-period=0", "--force",
                                     "-f", "-")
    assert_cleanup(kubectl, ns, *selectors)


def assert_cleanup(kubectl, ns, *selectors):
    """assertCleanup: PollImmediate(500ms, 1min) until no rc or svc and no pod without a
    deletionTimestamp matches any of the selectors."""
    e = [None]

    def verify_cleanup():
        e[0] = None
        for selector in selectors:
            resources = kubectl.run_kubectl_or_die(ns, "get", "rc,svc", "-l", selector,
                                                   "--no-headers")
            if resources != "":
                e[0] = "Resources left running after stop:\n%s" % resources
                return False
            pods = kubectl.run_kubectl_or_die(
                ns, "get", "pods", "-l", selector, "-o",
                'go-template={{ range .items }}{{ if not .metadata.deletionTimestamp }}'
                '{{ .metadata.name }}{{ "\\n" }}{{ end }}{{ end }}')
            if pods != "":
                e[0] = "Pods left unterminated after stop:\n%s" % pods
                return False
        return True

    deadline = time.monotonic() + 60
    while not verify_cleanup():
        if time.monotonic() + 0.5 > deadline:
            fail("%s", e[0])
        time.sleep(0.5)


def trim_docker_registry(imagename):
    """trimDockerRegistry"""
    imagename = imagename.replace("docker.io/", "", 1)
    return imagename.replace("library/", "", 1)


def get_ud_data(f, jpg_expected, ns):
    """getUDData: a validator GETting data.json through the pods/proxy subresource and
    checking its image field contains jpg_expected. The validator returns None or the
    error text."""

    def validator(pod_id):
        logf("validating pod %s", pod_id)
        start = time.monotonic()
        try:
            resp = f.api_client.call_api(
                "/api/v1/namespaces/{namespace}/pods/{name}/proxy/data.json", "GET",
                path_params={"namespace": ns, "name": pod_id}, header_params={"Accept": "*/*"},
                auth_settings=["BearerToken"], _return_http_data_only=True,
                _preload_content=False, _request_timeout=(10, SINGLE_CALL_TIMEOUT))
            try:
                body = resp.data
            finally:
                resp.release_conn()
        except ApiException as err:
            if time.monotonic() - start >= SINGLE_CALL_TIMEOUT:
                fail("Failed to retrieve data from container: %s", describe_error(err))
            return describe_error(err)
        except OSError as err:  # a transport error (the context's deadline, as upstream)
            if time.monotonic() - start >= SINGLE_CALL_TIMEOUT:
                fail("Failed to retrieve data from container: %s", err)
            return str(err)
        logf("got data: %s", body.decode(errors="replace"))
        try:
            decoded = json.loads(body)
        except ValueError as err:
            return str(err)
        # updateDemoData{Image string}: encoding/json matches "image" case-insensitively
        image = ""
        if isinstance(decoded, dict):
            for key, value in decoded.items():
                if key.lower() == "image" and isinstance(value, str):
                    image = value
        logf("Unmarshalled json jpg/img => {%s} , expecting %s .", image, jpg_expected)
        if jpg_expected in image:
            return None
        return "data served up in container is inaccurate, {%s} didn't contain %s" % (
            image, jpg_expected)

    return validator


def validate_controller(kubectl, container_image, replicas, containername, testname,
                        validator, ns):
    """validateController: every 5s for up to PodStartTimeout, list the pods of `testname`
    (a selector) with kubectl templates; once there are `replicas` of them, each with its
    container `containername` running the expected image and passing the validator, it
    returns; else the test fails."""
    container_image = trim_docker_registry(container_image)
    get_pods_template = "--template={{range.items}}{{.metadata.name}} {{end}}"
    get_container_state_template = (
        '--template={{if (exists . "status" "containerStatuses")}}{{range '
        '.status.containerStatuses}}{{if (and (eq .name "%s") (exists . "state" "running"))}}'
        'true{{end}}{{end}}{{end}}' % containername)
    get_image_template = (
        '--template={{if (exists . "spec" "containers")}}{{range .spec.containers}}{{if eq '
        '.name "%s"}}{{.image}}{{end}}{{end}}{{end}}' % containername)

    by("waiting for all containers in %s pods to come up." % testname)
    start = time.monotonic()
    first = True
    while time.monotonic() - start < POD_START_TIMEOUT:
        if not first:
            time.sleep(5)
        first = False
        get_pods_output = kubectl.run_kubectl_or_die(ns, "get", "pods", "-o", "template",
                                                     get_pods_template, "-l", testname)
        pods = get_pods_output.split()
        if len(pods) != replicas:
            by("Replicas for %s: expected=%d actual=%d" % (testname, replicas, len(pods)))
            continue
        running_pods = []
        ok = True
        for pod_id in pods:
            running = kubectl.run_kubectl_or_die(ns, "get", "pods", pod_id, "-o", "template",
                                                 get_container_state_template)
            if running != "true":
                logf("%s is created but not running", pod_id)
                ok = False
                break
            current_image = kubectl.run_kubectl_or_die(ns, "get", "pods", pod_id, "-o",
                                                       "template", get_image_template)
            current_image = trim_docker_registry(current_image)
            if current_image != container_image:
                logf("%s is created but running wrong image; expected: %s, actual: %s",
                     pod_id, container_image, current_image)
                ok = False
                break
            # Call the generic validator function here. This might validate for example,
            # that (1) getting a url works and (2) url is serving correct content.
            err = validator(pod_id)
            if err is not None:
                logf("%s is running right image but validator function failed: %s", pod_id,
                     err)
                ok = False
                break
            logf("%s is verified up and running", pod_id)
            running_pods.append(pod_id)
        # If we reach here, then all our checks passed.
        if ok and len(running_pods) == replicas:
            return
    # Reaching here means that one of more checks failed multiple times. Assuming its not a
    # race condition, something is broken.
    fail("Timed out after %s seconds waiting for %s pods to reach valid state",
         float(POD_START_TIMEOUT), testname)


def debug_discovery(kubectl):
    """debugDiscovery: log kubectl's cached $HOME/.kube/cache/discovery/<host>/v1/
    serverresources.json files (upstream splits the relative path with filepath.SplitList,
    so in practice it only logs the scan)."""
    home = kubectl.home
    if not home:
        logf("no $HOME envvar set")
        return
    cache_dir = os.path.join(home, ".kube", "cache", "discovery")
    err = None
    if not os.path.exists(cache_dir):
        err = "lstat %s: no such file or directory" % cache_dir
    else:
        for root, _dirs, files in os.walk(cache_dir):
            for name in files:
                path = os.path.join(root, name)
                subpath = os.path.relpath(path, cache_dir)
                parts = subpath.split(os.pathsep)  # filepath.SplitList
                if len(parts) != 3 or parts[1] != "v1" or parts[2] != "serverresources.json":
                    continue
                logf("%s modified at %s (current time: %s)", path, os.path.getmtime(path),
                     time.time())
                with open(path) as fh:
                    logf("%s content: %s", path, fh.read())
    logf("scanned %s for discovery docs: %s", home, err or "<nil>")


# Release: v1.9
# Testname: Kubectl, replication controller
# Description: Create a Pod and a container with a given image. Configure replication
# controller to run 2 replicas. The number of running instances of the Pod MUST equal the
# number of replicas set on the replication controller which is 2.
@conformance("[sig-cli] Kubectl client Update Demo should create and stop a replication "
             "controller [Conformance]")
def test_update_demo_create_and_stop_rc(new_framework, kubectl):
    f = kubectl_framework(new_framework)
    ns = f.namespace.metadata.name
    nautilus = NAUTILUS_RC_YAML
    with deferred(lambda: cleanup_kubectl_inputs(kubectl, nautilus, ns, UPDATE_DEMO_SELECTOR)):
        by("creating a replication controller")
        kubectl.run_kubectl_or_die_input(ns, nautilus, "create", "-f", "-")
        validate_controller(kubectl, NAUTILUS_IMAGE, 2, "update-demo", UPDATE_DEMO_SELECTOR,
                            get_ud_data(f, "nautilus.jpg", ns), ns)


# Release: v1.9
# Testname: Kubectl, scale replication controller
# Description: Create a Pod and a container with a given image. Configure replication
# controller to run 2 replicas. The number of running instances of the Pod MUST equal the
# number of replicas set on the replication controller which is 2. Update the replicaset to
# 1. Number of running instances of the Pod MUST be 1. Update the replicaset to 2. Number of
# running instances of the Pod MUST be 2.
@conformance("[sig-cli] Kubectl client Update Demo should scale a replication controller "
             "[Conformance]")
def test_update_demo_scale_rc(new_framework, kubectl):
    f = kubectl_framework(new_framework)
    ns = f.namespace.metadata.name
    nautilus = NAUTILUS_RC_YAML
    with deferred(lambda: cleanup_kubectl_inputs(kubectl, nautilus, ns, UPDATE_DEMO_SELECTOR)):
        nautilus_image = NAUTILUS_IMAGE

        by("creating a replication controller")
        kubectl.run_kubectl_or_die_input(ns, nautilus, "create", "-f", "-")
        validate_controller(kubectl, nautilus_image, 2, "update-demo", UPDATE_DEMO_SELECTOR,
                            get_ud_data(f, "nautilus.jpg", ns), ns)
        by("scaling down the replication controller")
        debug_discovery(kubectl)
        kubectl.run_kubectl_or_die(ns, "scale", "rc", "update-demo-nautilus", "--replicas=1",
                                   "--timeout=5m")
        validate_controller(kubectl, nautilus_image, 1, "update-demo", UPDATE_DEMO_SELECTOR,
                            get_ud_data(f, "nautilus.jpg", ns), ns)
        by("scaling up the replication controller")
        debug_discovery(kubectl)
        kubectl.run_kubectl_or_die(ns, "scale", "rc", "update-demo-nautilus", "--replicas=2",
                                   "--timeout=5m")
        validate_controller(kubectl, nautilus_image, 2, "update-demo", UPDATE_DEMO_SELECTOR,
                            get_ud_data(f, "nautilus.jpg", ns), ns)

