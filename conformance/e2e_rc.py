"""Framework helpers for the ReplicationController-based conformance ports
(test_replication_controller.py, the RC tests of test_garbage_collector.py,
test_service_latency.py, test_empty_dir_wrapper.py, test_kubectl.py).

They stand in for these pieces of the upstream e2e framework (kubernetes/kubernetes v1.32,
test/e2e/...), written against the official Python client like e2e_framework.py (which they
build on and do not change):

* ``new_rc``, ``update_replication_controller_with_retries``, ``watch_until_without_retry``,
  ``check_replication_controller_status_replica_count``: test/e2e/apps/rc.go's helpers.
* ``watch_event_sequence_verifier``: framework.WatchEventSequenceVerifier (framework/util.go).
* ``RCConfig`` / ``run_rc``: testutils.RCConfig and e2erc.RunRC (test/utils/runners.go,
  framework/rc/rc_utils.go): create the RC, then wait for its pods to be running and ready.
* ``delete_rc_and_wait_for_gc``: e2erc.DeleteRCAndWaitForGC, a wrapper around
  e2e_resource.py's ``delete_resource_and_wait_for_gc`` (e2eresource.DeleteResourceAndWaitForGC,
  framework/resource/resources.go). ``run_rc`` watches the pods with e2e_resource.py's
  ``PodStore`` (testutils.NewPodStore).
* ``pods_created``: e2epod.PodsCreated; ``delete_pods_with_grace_period``:
  e2epod.DeletePodsWithGracePeriod.
* ``get_random_ready_schedulable_node``: e2enode.GetRandomReadySchedulableNode.
* ``wait_for_service``: e2enetwork.WaitForService.
* ``ClusterVerification``: framework.ClusterVerification / PodStateVerification
  (f.NewClusterVerification(...).WaitFor / ForEach).
* ``Kubectl`` (``run_kubectl_or_die``, ``run_kubectl_or_die_input``, ``run_kubectl``):
  e2ekubectl.RunKubectlOrDie / RunKubectlOrDieInput / RunKubectl (framework/kubectl:
  ``kubectl --server=HOST --kubeconfig=FILE --namespace=NS ARGS...``, stdout returned, the
  test failed with stdout and stderr on a non-zero exit); ``write_admin_kubeconfig`` builds
  the kubeconfig kubectl uses from the admin certificate conftest.py made with
  ``shepherd pki``; ``look_for_string_in_log``: e2eoutput.LookForStringInLog.
"""

import json
import os
import random
import subprocess
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (WatchClosed, Watcher, by, describe_error, expect_no_error, fail,
                           get_ready_schedulable_nodes, is_not_found, logf, pod_phase,
                           pods_created_by_label, selector_from_set)
from e2e_resource import KIND_REPLICATION_CONTROLLER, PodStore, delete_resource_and_wait_for_gc

# wait.ErrWaitTimeout / wait.ErrorInterrupted(errors.New(...)) text
TIMED_OUT = "timed out waiting for the condition"
# watchtools.ErrWatchClosed
ERR_WATCH_CLOSED = "watch closed before UntilWithoutRetry timeout"

SERVICE_START_TIMEOUT = 3 * 60   # framework.ServiceStartTimeout
POD_LIST_TIMEOUT = 60            # framework.PodListTimeout


# --------------------------------------------------------------------------- rc.go


def new_rc(rs_name, replicas, rc_pod_labels, image_name, image, args):
    """newRC (test/e2e/apps/rc.go): no selector (the server defaults it from the template's
    labels), terminationGracePeriodSeconds 0."""
    return client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name=rs_name),
        spec=client.V1ReplicationControllerSpec(
            replicas=replicas,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=rc_pod_labels),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=0,
                    containers=[client.V1Container(name=image_name, image=image,
                                                   args=args)]))))


def update_replication_controller_with_retries(core, namespace, name, apply_update):
    """updateReplicationControllerWithRetries (rc.go): PollUntilContextTimeout(10ms, 1min,
    immediate) of get, apply_update, update; a Get error ends it, an Update error is
    retried. Returns (rc, error text or None)."""
    update_err = None
    rc = None
    deadline = time.monotonic() + 60
    while True:
        try:
            rc = core.read_namespaced_replication_controller(name, namespace)
        except ApiException as err:
            return None, describe_error(err)
        apply_update(rc)
        try:
            rc = core.replace_namespaced_replication_controller(name, namespace, rc)
            logf("Updating replication controller %r", name)
            return rc, None
        except ApiException as err:
            update_err = describe_error(err)
            rc = None
        if time.monotonic() + 0.01 > deadline:
            return rc, "couldn't apply the provided updated to rc %r: %s" % (name, update_err)
        time.sleep(0.01)


def check_replication_controller_status_replica_count(f, rc_name, quantity):
    """checkReplicationControllerStatusReplicaCount (rc.go): a poll condition returning
    (done, error text or None)."""

    def condition():
        logf("Get Replication Controller %r to confirm replicas", rc_name)
        try:
            rc = f.core.read_namespaced_replication_controller(rc_name,
                                                               f.namespace.metadata.name)
        except ApiException as err:
            return False, describe_error(err)
        if ((rc.status.replicas if rc.status else 0) or 0) != quantity:
            return False, None
        logf("Found %d replicas for %r replication controller", quantity, rc.metadata.name)
        return True, None

    return condition


def watch_until_without_retry(watcher, timeout, *conditions):
    """watchUntilWithoutRetry (rc.go): reads events from the watcher's result channel until
    each condition in turn returns done; the first condition error ends it. The watch is
    not closed (it stays open for the next call, as WatchEventSequenceVerifier needs).
    ``timeout`` None is the test's own context (no deadline of its own). Returns
    (last event or None, error text or None)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    last = None
    for condition in conditions:
        # check the next condition against the previous event first
        if last is not None:
            done, err = condition(last)
            if err is not None:
                return last, err
            if done:
                continue
        while True:
            wait = 1.0
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return last, TIMED_OUT
                wait = min(wait, remaining)
            try:
                event = watcher.next(wait)
            except WatchClosed:
                return last, ERR_WATCH_CLOSED
            if event is None:
                continue
            last = event
            done, err = condition(event)
            if err is not None:
                return last, err
            if done:
                break
    return last, None


def watch_event_sequence_verifier(list_func, namespace, resource_name, label_selector,
                                  expected_watch_events, scenario, retry_cleanup):
    """framework.WatchEventSequenceVerifier: up to 3 tries of: list (with the label
    selector) for the resourceVersion, open a RetryWatcher from it (its ListWatch's
    WatchFunc gets only the RetryWatcher's options: resourceVersion and
    allowWatchBookmarks, no selector), run ``scenario(watcher)`` which returns the event
    types it collected, match them in order against ``expected_watch_events``, run
    ``retry_cleanup()``; retry the whole scenario while expected events are missing.

    ``list_func`` is the typed namespaced list method (the same GET as the dynamic
    client's)."""
    retries = 3
    for attempt in range(1, retries + 1):
        init_resource = expect_no_error(list_func, namespace, label_selector=label_selector,
                                        explain="Failed to fetch initial resource")
        resource_watch = Watcher(list_func, namespace, retry=True,
                                 resource_version=init_resource.metadata.resource_version,
                                 allow_watch_bookmarks=True)
        try:
            actual_watch_events = scenario(resource_watch)
        finally:
            resource_watch.stop()
        errs = set()
        if not len(expected_watch_events) <= len(actual_watch_events):
            fail("Did not get enough watch events\nExpected\n    <int>: %d\nto be <=\n    "
                 "<int>: %d", len(expected_watch_events), len(actual_watch_events))

        total_valid_watch_events = 0
        found_event_indexes = {}
        for watch_event_index, expected in enumerate(expected_watch_events):
            found = False
            for actual_index, actual in enumerate(actual_watch_events):
                if actual_index in found_event_indexes:
                    continue
                if actual == expected:
                    found = True
                    found_event_indexes[actual_index] = watch_event_index
                    break
            if not found:
                errs.add("Watch event %s not found" % expected)
            total_valid_watch_events += 1
        err = retry_cleanup()
        if err is not None:
            fail("Error occurred when cleaning up resources: %s", err)
        if errs and attempt < retries:
            print("invariants violated:\n", "\n - ".join(sorted(errs)), flush=True)
            continue
        if errs:
            fail("Unexpected error(s): %s", "\n - ".join(sorted(errs)))
        if len(expected_watch_events) != total_valid_watch_events:
            fail("Error: there must be an equal amount of total valid watch events (%d) and "
                 "expected watch events (%d)", total_valid_watch_events,
                 len(expected_watch_events))
        return


# --------------------------------------------------------------------------- pods


def pods_created(core, ns, name, replicas):
    """e2epod.PodsCreated: PodsCreatedByLabel with the selector name=<name>."""
    return pods_created_by_label(core, ns, name, replicas, selector_from_set({"name": name}))


def delete_pods_with_grace_period(core, pods, grace):
    """e2epod.DeletePodsWithGracePeriod: delete each pod with the grace period; NotFound is
    fine. Returns None or the error text."""
    for pod in pods:
        logf("Deleting pod %r in namespace %r", pod.metadata.name, pod.metadata.namespace)
        try:
            core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace,
                                       body=client.V1DeleteOptions(grace_period_seconds=grace))
        except ApiException as err:
            if is_not_found(err):
                continue  # assume pod was already deleted
            return "pod Delete API error: %s" % describe_error(err)
        logf("Wait up to %s for pod %r to be fully deleted", "5m0s", pod.metadata.name)
    return None


def get_random_ready_schedulable_node(core):
    """e2enode.GetRandomReadySchedulableNode: (node, error text or None)."""
    nodes, err = get_ready_schedulable_nodes(core)
    if err is not None:
        return None, err
    return random.choice(nodes.items), None


def _failed_containers_restarts(pod):
    """The sum of testutils.FailedContainers(pod)'s Restarts: each container status's
    restartCount (keyed by container ID upstream)."""
    restarts = {}
    for st in (pod.status.container_statuses if pod.status else None) or []:
        if st.restart_count:
            restarts[st.container_id] = st.restart_count
    return sum(restarts.values())


class RCConfig:
    """testutils.RCConfig (the fields the ported tests set)."""

    def __init__(self, core, image, name, namespace, replicas, poll_interval=0, timeout=0,
                 command=None, max_container_failures=None, silent=False):
        self.client = core
        self.image = image
        self.name = name
        self.namespace = namespace
        self.replicas = replicas
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.command = command
        self.max_container_failures = max_container_failures
        self.silent = silent
        self.dns_policy = None

    def log(self, msg, *args):
        logf(msg, *args)

    def create(self):
        """RCConfig.create: RC name=<name>, selector and template labels name=<name>, one
        container named <name> with port 80, dnsPolicy Default, grace period 1s. Returns
        None or the error text."""
        if self.dns_policy is None:
            self.dns_policy = "Default"
        rc = client.V1ReplicationController(
            metadata=client.V1ObjectMeta(name=self.name),
            spec=client.V1ReplicationControllerSpec(
                replicas=self.replicas,
                selector={"name": self.name},
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels={"name": self.name}),
                    spec=client.V1PodSpec(
                        containers=[client.V1Container(
                            name=self.name, image=self.image, command=self.command,
                            ports=[client.V1ContainerPort(container_port=80)])],
                        dns_policy=self.dns_policy,
                        termination_grace_period_seconds=1))))
        # CreateRCWithRetries: retries only on transient errors (RetryWithExponentialBackOff)
        err = _create_with_retries(lambda: self.client.create_namespaced_replication_controller(
            self.namespace, rc))
        if err is not None:
            return "error creating replication controller: %s" % err
        self.log("Created replication controller with name: %s, namespace: %s, replica count: "
                 "%d", rc.metadata.name, self.namespace, self.replicas)
        return None

    def start(self):
        """RCConfig.start: every poll interval, count the pods of the pod store; fail when
        too many containers failed or pods disappeared; succeed once `replicas` pods are
        running and ready; give up when nothing changed for `timeout`. Returns None or the
        error text."""
        if self.max_container_failures is None:
            max_container_failures = int(max(1.0, self.replicas * .01))
        else:
            max_container_failures = self.max_container_failures
        label = selector_from_set({"name": self.name})
        try:
            ps = PodStore(self.client, self.namespace, label)
        except RuntimeError as err:
            return str(err)
        try:
            interval = self.poll_interval if self.poll_interval > 0 else 10
            timeout = self.timeout if self.timeout > 0 else 5 * 60
            old_pods = []
            old_running = 0
            last_change = time.monotonic()
            while old_running != self.replicas:
                time.sleep(interval)
                pods = ps.list()
                status = compute_rc_startup_status(pods, self.replicas)
                if not self.silent:
                    self.log("%s Pods: %d out of %d created, %d running, %d pending, %d "
                             "waiting, %d inactive, %d terminating, %d unknown, %d "
                             "runningButNotReady ", self.name, len(status["created"]),
                             status["expected"], status["running"], status["pending"],
                             status["waiting"], status["inactive"], status["terminating"],
                             status["unknown"], status["running_but_not_ready"])
                if status["failed_containers"] > max_container_failures:
                    return "%d containers failed which is more than allowed %d" % (
                        status["failed_containers"], max_container_failures)
                current = {p.metadata.name for p in pods}
                deleted = [p.metadata.name for p in old_pods if p.metadata.name not in current]
                if deleted:
                    err = "%d pods disappeared for %s: %s" % (len(deleted), self.name,
                                                               ", ".join(deleted))
                    self.log(err)
                    return err
                if len(pods) > len(old_pods) or status["running"] > old_running:
                    last_change = time.monotonic()
                old_pods = pods
                old_running = status["running"]
                if time.monotonic() - last_change > timeout:
                    break
            if old_running != self.replicas:
                try:
                    pods = self.client.list_pod_for_all_namespaces(label_selector=label)
                    for pod in pods.items:
                        self.log("Pod %s\t%s\t%s\t%s", pod.metadata.name, pod.spec.node_name,
                                 pod_phase(pod), pod.metadata.deletion_timestamp)
                except ApiException as err:
                    self.log("Can't list pod debug info: %s", describe_error(err))
                return "Only %d pods started out of %d" % (old_running, self.replicas)
            return None
        finally:
            ps.stop()


def compute_rc_startup_status(pods, expected):
    """testutils.ComputeRCStartupStatus"""
    st = {"expected": expected, "terminating": 0, "running": 0, "running_but_not_ready": 0,
          "waiting": 0, "pending": 0, "scheduled": 0, "unknown": 0, "inactive": 0,
          "failed_containers": 0, "created": []}
    for p in pods:
        if p.metadata.deletion_timestamp is not None:
            st["terminating"] += 1
            continue
        st["created"].append(p)
        phase = pod_phase(p)
        if phase == "Running":
            ready = any(c.type == "Ready" and c.status == "True"
                        for c in (p.status.conditions or []))
            if ready:  # only count a pod as running when it is also ready
                st["running"] += 1
            else:
                st["running_but_not_ready"] += 1
            st["failed_containers"] += _failed_containers_restarts(p)
        elif phase == "Pending":
            if not p.spec.node_name:
                st["waiting"] += 1
            else:
                st["pending"] += 1
        elif phase in ("Succeeded", "Failed"):
            st["inactive"] += 1
        elif phase == "Unknown":
            st["unknown"] += 1
        if p.spec.node_name:
            st["scheduled"] += 1
    return st


def _is_retryable(err):
    """testutils.IsRetryableAPIError: timeouts, 429, 500-ish internal errors, 503."""
    return isinstance(err, ApiException) and err.status in (429, 500, 503, 504)


def _create_with_retries(create):
    """testutils.Create*WithRetries: RetryWithExponentialBackOff (100ms, x3, 6 steps);
    AlreadyExists counts as success. Returns None or the error text."""
    delay = 0.1
    last = None
    for _ in range(6):
        try:
            create()
            return None
        except ApiException as err:
            if err.status == 409 and "AlreadyExists" in (err.body or ""):
                return None
            if not _is_retryable(err):
                return "failed to create object with non-retriable error: %s" % \
                    describe_error(err)
            last = err
        time.sleep(delay)
        delay *= 3
    return TIMED_OUT + (": %s" % describe_error(last) if last else "")


def run_rc(config):
    """e2erc.RunRC -> testutils.RunRC: create, then start. Returns None or the error
    text."""
    by("creating replication controller %s in namespace %s" % (config.name, config.namespace))
    err = config.create()
    if err is not None:
        return err
    return config.start()


def delete_rc_and_wait_for_gc(core, ns, name):
    """e2erc.DeleteRCAndWaitForGC -> e2eresource.DeleteResourceAndWaitForGC(ctx, c,
    api.Kind("ReplicationController"), ns, name): e2e_resource.delete_resource_and_wait_for_gc
    (its pods selected by spec.selector, replicas = spec.replicas). Returns None or the
    error text."""
    return delete_resource_and_wait_for_gc(core.api_client, KIND_REPLICATION_CONTROLLER, ns,
                                           name)


# --------------------------------------------------------------------------- services


def wait_for_service(core, namespace, name, exist, interval, timeout):
    """e2enetwork.WaitForService: PollUntilContextTimeout(interval, timeout, immediate) of a
    Get until the service exists (exist) or is gone. Returns None or the error text."""
    deadline = time.monotonic() + timeout
    err_text = None
    while True:
        try:
            core.read_namespaced_service(name, namespace)
            logf("Service %s in namespace %s found.", name, namespace)
            done = exist
        except ApiException as err:
            if is_not_found(err):
                logf("Service %s in namespace %s disappeared.", name, namespace)
                done = not exist
            else:
                logf("Non-retryable failure while getting service.")
                err_text = describe_error(err)
                break
        if done:
            return None
        if time.monotonic() + interval > deadline:
            err_text = "context deadline exceeded"
            break
        time.sleep(interval)
    state = "to appear" if exist else "to disappear"
    return "error waiting for service %s/%s %s: %s" % (namespace, name, state, err_text)


# --------------------------------------------------------------------------- cluster verification


class ClusterVerification:
    """f.NewClusterVerification(namespace, PodStateVerification{Selectors, ValidPhases})."""

    def __init__(self, core, namespace, selectors, valid_phases):
        self.core = core
        self.namespace = namespace
        self.selectors = dict(selectors)
        self.valid_phases = list(valid_phases)

    def _filter(self):
        """PodStateVerification.filter: (pods, error text or None)."""
        try:
            if self.selectors:
                pl = self.core.list_namespaced_pod(
                    self.namespace, label_selector=selector_from_set(self.selectors))
            else:
                pl = self.core.list_namespaced_pod(self.namespace)
        except ApiException as err:
            return [], describe_error(err)
        logf("Selector matched %d pods for %s", len(pl.items), self.selectors)
        return [p for p in pl.items if pod_phase(p) in self.valid_phases], None

    def wait_for(self, at_least, timeout):
        """WaitFor: PollUntilContextTimeout(1s, timeout, immediate=false) until at least
        `at_least` pods pass the filter. Returns (pods, error text or None)."""
        pods = []
        err = None
        deadline = time.monotonic() + timeout
        while True:
            time.sleep(1)
            pods, ferr = self._filter()
            if ferr is not None:
                logf("Cutting polling short: We got an error from the pod filtering layer.")
                err = ferr
                break
            logf("Found %d / %d", len(pods), at_least)
            if len(pods) >= at_least:
                break
            if time.monotonic() + 1 > deadline:
                err = "context deadline exceeded"
                break
        logf("WaitFor completed with timeout %ss.  Pods found = %d out of %d", timeout,
             len(pods), at_least)
        return pods, err

    def for_each(self, pod_func):
        """ForEach: run pod_func on every pod passing the filter now (none fails the
        test). Returns None or the error text."""
        pods, err = self._filter()
        if err is None:
            if not pods:
                fail("No pods matched the filter.")
            logf("ForEach: Found %d pods from the filter.  Now looping through them.",
                 len(pods))
            for p in pods:
                pod_func(p)
        else:
            logf("ForEach: Something went wrong when filtering pods to execute against: %s",
                 err)
        return err


# --------------------------------------------------------------------------- kubectl


KUBECTL_PATH = os.environ.get("SHEPHERD_KUBECTL", "/usr/bin/kubectl")


def write_admin_kubeconfig(path, server, ca_file, cert_file, key_file):
    """A kubeconfig naming the server and the cluster admin's certificate (the files
    conftest.py's ``shepherd pki`` wrote and the Python client uses)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "conformance",
                      "cluster": {"server": server, "certificate-authority": ca_file}}],
        "users": [{"name": "admin",
                   "user": {"client-certificate": cert_file, "client-key": key_file}}],
        "contexts": [{"name": "conformance",
                      "context": {"cluster": "conformance", "user": "admin"}}],
        "current-context": "conformance",
    }
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    os.chmod(path, 0o600)
    return path


class KubectlError(Exception):
    pass


class Kubectl:
    """e2ekubectl's TestKubeconfig/KubectlBuilder: ``kubectl --server=HOST
    --kubeconfig=FILE [--namespace=NS] ARGS...``; ``home`` is the $HOME kubectl runs with
    (its discovery cache)."""

    def __init__(self, host, kubeconfig, home, kubectl_path=KUBECTL_PATH):
        self.host = host
        self.kubeconfig = kubeconfig
        self.home = home
        self.kubectl_path = kubectl_path

    def _cmd(self, namespace, args):
        default_args = []
        if self.host:
            default_args.append("--server=" + self.host)
        if self.kubeconfig:
            default_args.append("--kubeconfig=" + self.kubeconfig)
        if namespace:
            default_args.append("--namespace=%s" % namespace)
        return [self.kubectl_path] + default_args + list(args)

    def exec(self, namespace, args, stdin_data=None, timeout=None):
        """KubectlBuilder.Exec: (stdout, error text or None)."""
        cmd = self._cmd(namespace, args)
        logf("Running '%s'", " ".join(cmd))
        env = dict(os.environ, HOME=self.home)
        try:
            proc = subprocess.run(cmd, input=(stdin_data.encode() if isinstance(stdin_data, str)
                                              else stdin_data),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                  timeout=timeout or 600)
        except subprocess.TimeoutExpired as err:
            return "", "timed out waiting for the command %s: %s" % (cmd, err)
        stdout = proc.stdout.decode(errors="replace")
        stderr = proc.stderr.decode(errors="replace")
        if proc.returncode != 0:
            return stdout, ("error running %s:\nCommand stdout:\n%s\nstderr:\n%s\nerror:\n"
                            "exit status %d" % (" ".join(cmd), stdout, stderr,
                                                proc.returncode))
        logf("stderr: %r", stderr)
        logf("stdout: %r", stdout)
        return stdout, None

    def run_kubectl(self, namespace, *args):
        """e2ekubectl.RunKubectl: (stdout, error text or None)."""
        return self.exec(namespace, args)

    def run_kubectl_or_die(self, namespace, *args):
        """e2ekubectl.RunKubectlOrDie: stdout; a failing command fails the test."""
        out, err = self.exec(namespace, args)
        if err is not None:
            fail("unexpected error: %s", err)
        return out

    def run_kubectl_or_die_input(self, namespace, data, *args):
        """e2ekubectl.RunKubectlOrDieInput: the same with `data` on stdin."""
        out, err = self.exec(namespace, args, stdin_data=data)
        if err is not None:
            fail("unexpected error: %s", err)
        return out


def look_for_string_in_log(kubectl, ns, pod_name, container, expected_string, timeout):
    """e2eoutput.LookForStringInLog: `kubectl logs POD CONTAINER` every 2s until the output
    contains the string. Returns (last output, error text or None)."""
    result = ""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        result = kubectl.run_kubectl_or_die(ns, "logs", pod_name, container)
        if expected_string in result:
            return result, None
        time.sleep(2)
    return result, "Failed to find \"%s\", last result: \"%s\"" % (expected_string, result)
