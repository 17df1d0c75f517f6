"""Helpers for the ResourceQuota and LimitRange conformance ports (test_resource_quota.py,
test_limit_range.py, test_rc_quota.py).

They stand in for these pieces of kubernetes/kubernetes v1.32, written against the official
Python client like e2e_framework.py (which they build on and do not change):

* ``Quantity``, ``must_parse``: k8s.io/apimachinery/pkg/api/resource.Quantity and
  resource.MustParse (see "Quantities" below); ``resource_list_get`` / ``cpu`` /
  ``memory``: indexing a v1.ResourceList and ResourceList.Cpu() / .Memory();
  ``quota_add``: quota.Add (k8s.io/apiserver/pkg/quota/v1); ``semantic_equal_lists``:
  apiequality.Semantic.DeepEqual of two ResourceLists; ``go_deep_equal_lists``:
  reflect.DeepEqual of two ResourceLists.
* test/e2e/apimachinery/resource_quota.go's helpers, one function each, named after them
  (newTestResourceQuota -> new_test_resource_quota, waitForResourceQuota ->
  wait_for_resource_quota, countResourceQuota -> count_resource_quota, ...), with the
  constants resourceQuotaTimeout, podName, classGold and extendedResourceName.
* ``new_pod_quota``: newPodQuota (test/e2e/apps/replica_set.go, used by rc.go).
* test/e2e/scheduling/limit_range.go's helpers: getResourceList, newLimitRange, newTestPod,
  equalResourceRequirement, equalResourceList, checkLimitRangeListQuantity.

Quantities: the Python client keeps every quantity as the string the server wrote, while
the Go test holds resource.Quantity values. What the tests compare and send therefore goes
through ``Quantity``, which follows resource.ParseQuantity (the int64 fast path with its
cached canonical string, the inf.Dec slow path rounding up to nano units), Quantity.Cmp
(exact numeric comparison) and Quantity.String() / MarshalJSON (the canonical form:
DecimalSI with an exponent that is a multiple of 3, BinarySI in powers of 1024 when exact
and at least 1024). So:

* ``q.cmp(other)``: Quantity.Cmp, used where upstream calls Cmp or Semantic.DeepEqual;
* ``go_equal(a, b)``: gomega.Equal / reflect.DeepEqual of two Quantity structs (the int64
  amount, the format and the cached string must all match: a server answer "0.5" is not
  Equal to MustParse("500m") in Go either), and ``go_equal(a, b, pointer=True)`` Go's
  ``==`` on two Quantity values (inf.Dec amounts are pointers, never ``==``);
* ``reencode_resource_list``: the strings client-go writes when it sends back a
  ResourceList it decoded (each value's String()).
"""

import time
from fractions import Fraction

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (CONTEXT_DEADLINE, PAUSE_IMAGE, POLL, b64, describe_error, fail,
                           logf, to_model)

# --------------------------------------------------------------------------- resource.Quantity

DECIMAL_EXPONENT = "DecimalExponent"
BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"

_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15,
                 "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_BY_EXP = {v: k for k, v in _DEC_SUFFIXES.items()}
_BIN_BY_EXP = {v: k for k, v in _BIN_SUFFIXES.items()}
_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_MAX_INT64_FACTORS = 18   # maxInt64Factors
_NANO = -9                # resource.Nano


class QuantityError(ValueError):
    pass


# resource.ErrFormatWrong / ErrSuffix / ErrNumeric texts
ERR_FORMAT_WRONG = "quantities must match the regular expression " \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NUMERIC = "unable to parse numeric part of quantity"


class Quantity:
    """resource.Quantity: ``value`` (exact, a Fraction), ``format``, ``s`` (the cached
    string ParseQuantity keeps when the text was already canonical) and ``rep`` (the Go
    representation: ("i", int64 value, scale) for an int64Amount, ("d", unscaled, scale)
    for an inf.Dec)."""

    __slots__ = ("value", "format", "s", "rep")

    def __init__(self, value=Fraction(0), fmt="", s="", rep=("i", 0, 0)):
        self.value = Fraction(value)
        self.format = fmt
        self.s = s
        self.rep = rep

    def cmp(self, other):
        """Quantity.Cmp"""
        return (self.value > other.value) - (self.value < other.value)

    def is_zero(self):
        return self.value == 0

    def string(self):
        """Quantity.String() (also what MarshalJSON writes)."""
        if self.s:
            return self.s
        return _canonical(self.value, self.format)

    __str__ = string

    def __repr__(self):
        return "Quantity(%r, %s)" % (self.string(), self.format or '""')


def _parse_quantity_string(text):
    """resource.parseQuantityString: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "-+":
        positive = text[0] != "-"
        pos += 1
    # strip leading zeros
    i = pos
    while True:
        if i >= end:
            return positive, "0", "0", "", ""
        if text[i] == "0":
            pos += 1
            i += 1
            continue
        break
    # the numerator
    i = pos
    while True:
        if i >= end:
            return positive, text[0:end], text[pos:end], "", ""
        if not text[i].isdigit() or not text[i].isascii():
            num = text[pos:i]
            pos = i
            break
        i += 1
    if not num:
        num = "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        i = pos
        while True:
            if i >= end:
                return positive, text[0:end], num, text[pos:end], ""
            if not text[i].isdigit() or not text[i].isascii():
                denom = text[pos:i]
                pos = i
                break
            i += 1
    value = text[0:pos]
    suffix_start = pos
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, text[suffix_start:end]
        if text[i] not in "eEinumkKMGTP":
            pos = i
            break
        i += 1
    if pos < end and text[pos] in "-+":
        pos += 1
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, text[suffix_start:end]
        if not text[i].isdigit() or not text[i].isascii():
            break
        i += 1
    raise QuantityError(ERR_FORMAT_WRONG)


def _interpret(suffix):
    """quantitySuffixer.interpret: (base, exponent, format)."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            exp = int(suffix[1:], 10)
        except ValueError:
            raise QuantityError(ERR_SUFFIX)
        if not _INT64_MIN <= exp <= _INT64_MAX or suffix[1:].strip() != suffix[1:]:
            raise QuantityError(ERR_SUFFIX)
        return 10, exp, DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def parse_quantity(text):
    """resource.ParseQuantity; raises QuantityError."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, DECIMAL_SI, text, ("i", 0, 0))
    positive, value, num, denom, suf = _parse_quantity_string(text)
    base, exponent, fmt = _interpret(suf)

    precision = 0
    scale = 0
    mantissa = 1
    if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    else:  # BinarySI
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1

    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            parsed = int(shifted, 10)
            if parsed > _INT64_MAX:
                raise QuantityError(ERR_NUMERIC)
            result = parsed * mantissa
            if _INT64_MIN <= result <= _INT64_MAX:  # int64Multiply
                if not positive:
                    result = -result
                canonical = False
                if fmt == BINARY_SI:
                    canonical = exponent % 10 == 0 and (parsed & 0x07) != 0
                else:
                    canonical = (scale % 3 == 0 and not shifted.endswith("000") and
                                 shifted[0] != "0")
                return Quantity(Fraction(result) * Fraction(10) ** scale, fmt,
                                text if canonical else "", ("i", result, scale))

    # the inf.Dec slow path
    try:
        amount = Fraction(value) if value not in ("", "+", "-") else None
    except ValueError:
        amount = None
    if amount is None:
        raise QuantityError(ERR_NUMERIC)
    if base == 10:
        amount *= Fraction(10) ** exponent
    else:
        amount *= 1 << exponent
    negative = amount < 0
    amount = abs(amount)
    if amount != 0:
        # round up to the minimum representable value (nano units)
        units = amount * 10 ** 9
        units = -((-units.numerator) // units.denominator)
        amount = Fraction(units, 10 ** 9)
    if fmt == BINARY_SI and amount > _INT64_MAX:
        amount = Fraction(_INT64_MAX)
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    if negative:
        amount = -amount
    return Quantity(amount, fmt, "", ("d", int(amount * 10 ** 9), 9))


def must_parse(text):
    """resource.MustParse"""
    try:
        return parse_quantity(text)
    except QuantityError as err:
        raise ValueError("cannot parse '%s': %s" % (text, err))


def _strip(n, factor):
    times = 0
    while n != 0 and n % factor == 0:
        n //= factor
        times += 1
    return n, times


def _canonical(value, fmt):
    """Quantity.CanonicalizeBytes: the number and its suffix."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024:
            fmt = DECIMAL_SI
        elif value.denominator != 1:
            fmt = DECIMAL_SI  # don't lose precision
    elif fmt not in (DECIMAL_EXPONENT, DECIMAL_SI):
        fmt = DECIMAL_EXPONENT
    sign = "-" if value < 0 else ""
    value = abs(value)
    if fmt == BINARY_SI:
        amount, times = _strip(int(value), 1024)
        return sign + str(amount) + _BIN_BY_EXP.get(times * 10, "")
    # decimal: value = n * 10^k with n not divisible by 10
    k = 0
    while value.denominator != 1:
        value *= 10
        k -= 1
    n, times = _strip(int(value), 10)
    k += times
    e = k - (k % 3)  # the largest multiple of 3 not above k
    n *= 10 ** (k - e)
    if fmt == DECIMAL_SI:
        suffix = _DEC_BY_EXP.get(e, "")
    else:
        suffix = "" if e == 0 else "e%d" % e
    return sign + str(n) + suffix


def go_equal(a, b, pointer=False):
    """gomega.Equal / reflect.DeepEqual of two Quantity structs; with pointer=True Go's ==
    (an inf.Dec amount is a pointer: two of them are never ==)."""
    if pointer and (a.rep[0] == "d" or b.rep[0] == "d"):
        return False
    return a.rep == b.rep and a.format == b.format and a.s == b.s


def quantity_of(text):
    """The Quantity a Go client decodes from the JSON string ``text`` (UnmarshalJSON);
    an unparsable value fails the test, as the decode error would."""
    try:
        return parse_quantity(text.strip())
    except QuantityError as err:
        fail("decoding quantity %r: %s", text, err)


def resource_list_get(rl, name):
    """ResourceList[name]: the value, or the zero Quantity{} when absent."""
    if rl and name in rl:
        return quantity_of(rl[name])
    return Quantity()


def resource_list_found(rl, name):
    """``v, found := rl[name]``"""
    if rl and name in rl:
        return quantity_of(rl[name]), True
    return Quantity(), False


def cpu(rl):
    """ResourceList.Cpu(): the value, or a zero DecimalSI quantity."""
    if rl and "cpu" in rl:
        return quantity_of(rl["cpu"])
    return Quantity(0, DECIMAL_SI)


def memory(rl):
    """ResourceList.Memory(): the value, or a zero BinarySI quantity."""
    if rl and "memory" in rl:
        return quantity_of(rl["memory"])
    return Quantity(0, BINARY_SI)


def reencode_resource_list(rl):
    """A decoded ResourceList as client-go writes it back (each value's String())."""
    if rl is None:
        return None
    return {k: quantity_of(v).string() for k, v in rl.items()}


def format_resource_list(rl):
    """A readable rendering of a ResourceList for log lines (Go prints the structs)."""
    if rl is None:
        return "map[]"
    return "map[%s]" % " ".join("%s:%s" % (k, quantity_of(v).string())
                                for k, v in sorted(rl.items()))


def quota_add(a, b):
    """quota.Add(a, b): the sum of two ResourceLists (string values, canonical form)."""
    result = {}
    for key, value in (a or {}).items():
        q = quantity_of(value)
        if b and key in b:
            q = Quantity(q.value + quantity_of(b[key]).value, q.format)
        result[key] = q.string()
    for key, value in (b or {}).items():
        if key not in result:
            result[key] = quantity_of(value).string()
    return result


def semantic_equal_lists(a, b):
    """apiequality.Semantic.DeepEqual of two ResourceLists: the same names, and values
    equal by Quantity.Cmp (nil and empty lists are equal)."""
    a = a or {}
    b = b or {}
    if set(a) != set(b):
        return False
    return all(quantity_of(a[k]).cmp(quantity_of(b[k])) == 0 for k in a)


def go_deep_equal_lists(a, b):
    """reflect.DeepEqual of two ResourceLists holding Quantity values (``b`` may hold
    Quantity objects, e.g. from must_parse). (Go tells a nil map from an empty one; the
    tests only compare non-empty lists.)"""
    a = a or {}
    b = b or {}
    if set(a) != set(b):
        return False
    for k in a:
        qa = a[k] if isinstance(a[k], Quantity) else quantity_of(a[k])
        qb = b[k] if isinstance(b[k], Quantity) else quantity_of(b[k])
        if not go_equal(qa, qb):
            return False
    return True


# --------------------------------------------------------------------------- resource_quota.go

RESOURCE_QUOTA_TIMEOUT = 60   # resourceQuotaTimeout (how long to wait for a quota update)
POD_NAME = "pfpod"            # podName
CLASS_GOLD = "gold"           # classGold
EXTENDED_RESOURCE_NAME = "example.com/dongle"   # extendedResourceName
DEFAULT_RESOURCE_REQUESTS_PREFIX = "requests."  # v1.DefaultResourceRequestsPrefix

# v1.ResourceName constants used by the tests
RESOURCE_PODS = "pods"
RESOURCE_SERVICES = "services"
RESOURCE_SERVICES_NODE_PORTS = "services.nodeports"
RESOURCE_SERVICES_LOAD_BALANCERS = "services.loadbalancers"
RESOURCE_REPLICATION_CONTROLLERS = "replicationcontrollers"
RESOURCE_QUOTAS = "resourcequotas"
RESOURCE_CPU = "cpu"
RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_CONFIG_MAPS = "configmaps"
RESOURCE_SECRETS = "secrets"
RESOURCE_PERSISTENT_VOLUME_CLAIMS = "persistentvolumeclaims"
RESOURCE_REQUESTS_STORAGE = "requests.storage"
RESOURCE_REQUESTS_CPU = "requests.cpu"
RESOURCE_REQUESTS_MEMORY = "requests.memory"
RESOURCE_LIMITS_CPU = "limits.cpu"
RESOURCE_LIMITS_MEMORY = "limits.memory"

SCOPE_TERMINATING = "Terminating"
SCOPE_NOT_TERMINATING = "NotTerminating"
SCOPE_BEST_EFFORT = "BestEffort"
SCOPE_NOT_BEST_EFFORT = "NotBestEffort"


def v1_resource_by_storage_class(storage_class, resource_name):
    """core.V1ResourceByStorageClass"""
    return "%s.storageclass.storage.k8s.io/%s" % (storage_class, resource_name)


def _rl(d):
    """A v1.ResourceList field as the Go encoder writes it: an empty map is omitted."""
    return dict(d) if d else None


def new_test_resource_quota_with_scope(name, scope):
    """newTestResourceQuotaWithScope"""
    hard = {RESOURCE_PODS: "5"}
    if scope in (SCOPE_TERMINATING, SCOPE_NOT_TERMINATING):
        hard[RESOURCE_REQUESTS_CPU] = "1"
        hard[RESOURCE_REQUESTS_MEMORY] = "500Mi"
        hard[RESOURCE_LIMITS_CPU] = "2"
        hard[RESOURCE_LIMITS_MEMORY] = "1Gi"
    return client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ResourceQuotaSpec(hard=hard, scopes=[scope]))


def new_test_resource_quota(name):
    """newTestResourceQuota: a quota that enforces default constraints for testing."""
    hard = {
        RESOURCE_PODS: "5",
        RESOURCE_SERVICES: "10",
        RESOURCE_SERVICES_NODE_PORTS: "1",
        RESOURCE_SERVICES_LOAD_BALANCERS: "1",
        RESOURCE_REPLICATION_CONTROLLERS: "10",
        RESOURCE_QUOTAS: "1",
        RESOURCE_CPU: "1",
        RESOURCE_MEMORY: "500Mi",
        RESOURCE_CONFIG_MAPS: "10",
        RESOURCE_SECRETS: "10",
        RESOURCE_PERSISTENT_VOLUME_CLAIMS: "10",
        RESOURCE_REQUESTS_STORAGE: "10Gi",
        RESOURCE_EPHEMERAL_STORAGE: "50Gi",
        v1_resource_by_storage_class(CLASS_GOLD, RESOURCE_PERSISTENT_VOLUME_CLAIMS): "10",
        v1_resource_by_storage_class(CLASS_GOLD, RESOURCE_REQUESTS_STORAGE): "10Gi",
        # test quota on discovered resource type
        "count/replicasets.apps": "5",
        # test quota on extended resource
        DEFAULT_RESOURCE_REQUESTS_PREFIX + EXTENDED_RESOURCE_NAME: "3",
    }
    return client.V1ResourceQuota(metadata=client.V1ObjectMeta(name=name),
                                  spec=client.V1ResourceQuotaSpec(hard=hard))


def new_test_pod_for_quota(f, name, requests, limits):
    """newTestPodForQuota: one pause container with the requests and limits; the node
    selector keeps the pod from being scheduled (upstream: "prevent disruption to other
    test workloads in parallel test runs")."""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            node_selector={"x-test.k8s.io/unsatisfiable": "not-schedulable"},
            containers=[client.V1Container(
                name="pause", image=PAUSE_IMAGE,
                resources=client.V1ResourceRequirements(requests=_rl(requests),
                                                        limits=_rl(limits)))]))


def new_test_replication_controller_for_quota(name, image, replicas):
    """newTestReplicationControllerForQuota"""
    return client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ReplicationControllerSpec(
            replicas=replicas,
            selector={"name": name},
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"name": name}),
                spec=client.V1PodSpec(containers=[client.V1Container(name=name,
                                                                     image=image)]))))


def new_test_replica_set_for_quota(name, image, replicas):
    """newTestReplicaSetForQuota"""
    return client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ReplicaSetSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels={"name": name}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"name": name}),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=0,
                    containers=[client.V1Container(name=name, image=image)]))))


def new_test_service_for_quota(name, service_type, allocate_load_balancer_node_ports):
    """newTestServiceForQuota: allocateLoadBalancerNodePorts only set for a
    LoadBalancer."""
    allocate_nps = allocate_load_balancer_node_ports if service_type == "LoadBalancer" \
        else None
    return client.V1Service(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ServiceSpec(
            type=service_type,
            ports=[client.V1ServicePort(port=80, target_port=80)],
            allocate_load_balancer_node_ports=allocate_nps))


def new_test_config_map_for_quota(name):
    """newTestConfigMapForQuota"""
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"a": "b"})


def new_test_secret_for_quota(name):
    """newTestSecretForQuota"""
    return client.V1Secret(
        metadata=client.V1ObjectMeta(name=name),
        data={"data-1": b64("value-1\n"), "data-2": b64("value-2\n"),
              "data-3": b64("value-3\n")})


def create_resource_quota(core, namespace, resource_quota):
    """createResourceQuota (raises ApiException)."""
    return core.create_namespaced_resource_quota(namespace, resource_quota)


def delete_resource_quota(core, namespace, name):
    """deleteResourceQuota (raises ApiException)."""
    return core.delete_namespaced_resource_quota(name, namespace)


def stable_count(list_fn, namespace, interval, timeout, stable_polls):
    """The "loop until the number ... has stabilized" polls of resource_quota.go:
    PollUntilContextTimeout(interval, timeout, immediate=false) of a List whose error fails
    the test (framework.ExpectNoError inside the condition); done once the count was
    unchanged on more than ``stable_polls`` polls in a row. Returns (count, error text or
    None)."""
    state = {"found": 0, "unchanged": 0}

    def condition():
        try:
            items = list_fn(namespace).items
        except ApiException as err:
            fail("unexpected error: %s", describe_error(err))
        if len(items) == state["found"]:
            state["unchanged"] += 1
            return state["unchanged"] > stable_polls, None
        state["unchanged"] = 0
        state["found"] = len(items)
        return False, None

    err = _poll(interval, timeout, condition, immediate=False)
    return state["found"], err


def count_resource_quota(core, namespace):
    """countResourceQuota: the number of ResourceQuotas once it has been stable for 5
    polls (1 s apart, at most 30 s). Upstream writes ``return found, wait.Poll...``; Go's
    gc compiler evaluates the call before reading ``found``, so the count returned is the
    one the poll settled on. Returns (count, error text or None)."""
    return stable_count(core.list_namespaced_resource_quota, namespace, 1, 30, 4)


def _poll(interval, timeout, condition, immediate):
    """wait.PollUntilContextTimeout: condition() returns (done, error text or None)."""
    deadline = time.monotonic() + timeout
    if not immediate:
        time.sleep(interval)
    while True:
        done, err = condition()
        if err is not None:
            return err
        if done:
            return None
        if time.monotonic() + interval > deadline:
            return CONTEXT_DEADLINE
        time.sleep(interval)


def wait_for_resource_quota(core, ns, quota_name, used):
    """waitForResourceQuota: until the quota's status.used shows every expected value
    (Quantity.Cmp); polls every framework.Poll (2 s) for resourceQuotaTimeout (1 min),
    the first poll after one interval; a Get error ends it. ``used`` maps names to
    Quantity (or quantity strings). Returns None or the error text."""

    def condition():
        try:
            resource_quota = core.read_namespaced_resource_quota(quota_name, ns)
        except ApiException as err:
            return False, describe_error(err)
        status_used = resource_quota.status.used if resource_quota.status else None
        # used may not yet be calculated
        if status_used is None:
            return False, None
        # verify that the quota shows the expected used resource values
        for k, v in used.items():
            v = v if isinstance(v, Quantity) else must_parse(v)
            actual_value, found = resource_list_found(status_used, k)
            if not found or actual_value.cmp(v) != 0:
                logf("resource %s, expected %s, actual %s", k, v.string(),
                     actual_value.string())
                return False, None
        return True, None

    return _poll(POLL, RESOURCE_QUOTA_TIMEOUT, condition, immediate=False)


def unstructured_to_resource_quota(obj):
    """unstructuredToResourceQuota: the typed ResourceQuota of a dynamic-client answer."""
    return to_model(obj, "V1ResourceQuota")


def reencode_resource_quota(rq):
    """The quantities of a decoded ResourceQuota as client-go writes them back."""
    if rq.spec is not None:
        rq.spec.hard = reencode_resource_list(rq.spec.hard)
    if rq.status is not None:
        rq.status.hard = reencode_resource_list(rq.status.hard)
        rq.status.used = reencode_resource_list(rq.status.used)
    return rq


# --------------------------------------------------------------------------- replica_set.go


def new_pod_quota(name, number):
    """newPodQuota (test/e2e/apps/replica_set.go)"""
    return client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ResourceQuotaSpec(hard={RESOURCE_PODS: must_parse(number).string()}))


# --------------------------------------------------------------------------- limit_range.go

LIMIT_TYPE_CONTAINER = "Container"  # v1.LimitTypeContainer


def get_resource_list(cpu_, memory_, ephemeral_storage):
    """getResourceList: a ResourceList of the non-empty values (canonical strings)."""
    res = {}
    if cpu_ != "":
        res[RESOURCE_CPU] = must_parse(cpu_).string()
    if memory_ != "":
        res[RESOURCE_MEMORY] = must_parse(memory_).string()
    if ephemeral_storage != "":
        res[RESOURCE_EPHEMERAL_STORAGE] = must_parse(ephemeral_storage).string()
    return res


def new_limit_range(name, value, limit_type, min_, max_, default_limit, default_request,
                    max_limit_request_ratio):
    """newLimitRange: one item; the label time=<value>."""
    return client.V1LimitRange(
        metadata=client.V1ObjectMeta(name=name, labels={"time": value}),
        spec=client.V1LimitRangeSpec(limits=[client.V1LimitRangeItem(
            type=limit_type, min=_rl(min_), max=_rl(max_), default=_rl(default_limit),
            default_request=_rl(default_request),
            max_limit_request_ratio=_rl(max_limit_request_ratio))]))


def new_test_pod(name, requests, limits):
    """newTestPod (limit_range.go): one pause container with the requests and limits."""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="pause", image=PAUSE_IMAGE,
            resources=client.V1ResourceRequirements(requests=_rl(requests),
                                                    limits=_rl(limits)))]))


def equal_resource_list(expected, actual):
    """equalResourceList: None or the error text."""
    expected = expected or {}
    actual = actual or {}
    for k, v in expected.items():
        ev = quantity_of(v)
        av, found = resource_list_found(actual, k)
        if not found or ev.cmp(av) != 0:
            return "resource %s expected %s actual %s" % (k, ev.string(), av.string())
    for k, v in actual.items():
        av = quantity_of(v)
        ev, found = resource_list_found(expected, k)
        if not found or av.cmp(ev) != 0:
            return "resource %s expected %s actual %s" % (k, ev.string(), av.string())
    return None


def equal_resource_requirement(expected, actual):
    """equalResourceRequirement: ``expected``/``actual`` are V1ResourceRequirements.
    Returns None or the error text."""
    logf("Verifying requests: expected %s with actual %s", format_resource_list(
        expected.requests), format_resource_list(actual.requests))
    err = equal_resource_list(expected.requests, actual.requests)
    if err is not None:
        return err
    logf("Verifying limits: expected %s with actual %s", format_resource_list(expected.limits),
         format_resource_list(actual.limits))
    return equal_resource_list(expected.limits, actual.limits)


def check_limit_range_list_quantity(f, label, quantity):
    """checkLimitRangeListQuantity: a poll condition returning (done, error text or
    None)."""

    def condition():
        logf("Requesting list of LimitRange to confirm quantity")
        try:
            lst = f.core.list_namespaced_limit_range(f.namespace.metadata.name,
                                                     label_selector=label)
        except ApiException as err:
            return False, describe_error(err)
        if len(lst.items) != quantity:
            return False, None
        logf("Found %d LimitRange with label %r", quantity, label)
        return True, None

    return condition
