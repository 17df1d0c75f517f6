"""What /proc says about a process: resident memory and CPU time (tests and benchmarks)."""
import os


def rss_mib(pid):
    """Resident set size of `pid` in MiB (0.0 if /proc has no VmRSS line)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def cpu_seconds(pid):
    """User plus system CPU seconds `pid` has used so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
