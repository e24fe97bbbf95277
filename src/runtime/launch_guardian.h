// The launch guardian: no runtime outlives flashproof, however flashproof ends (SIGKILL included)
// and whatever started the runtime (a wrapper script that does not exec leaves the server a
// grandchild, out of PR_SET_PDEATHSIG's reach).
//
// A small process forked at the first launch, in a session of its own (a signal to flashproof's
// process group or terminal does not reach it). It holds one end of a socket pair whose other end
// only flashproof holds (close-on-exec, so no runtime inherits it). Every launch's process group is
// registered with it by the launched child itself before it execs, and unregistered once the group
// is gone. When that end closes (flashproof ended, in any way) it sends SIGKILL to every group still
// registered and exits. Between those two moments it sleeps in read(2): no polling, no cost.
//
// Why this and not the alternatives: a check at the next start leaves a runtime serving (holding
// its port and GPU memory) until someone runs flashproof again, and must guess which processes were
// its own; a cgroup also catches a runtime that leaves the process group (setsid), but needs a
// delegated cgroup v2 subtree, which neither these machines (cgroup v1) nor an unprivileged
// operator has. The guardian needs nothing but fork and a socket pair. What it cannot survive: being
// killed itself (a kill-tree of flashproof's descendants, which takes the runtime with it anyway).
#pragma once

#include <sys/types.h>

namespace fp {

// The write end to hand to a child before fork (it writes its own process group id, guardian_message,
// before exec); starts the guardian on first use in this process. -1 when it could not be started
// (socketpair or fork failed): launches go on without it, under PR_SET_PDEATHSIG alone.
int launch_guardian_fd();

// Registers (pgid > 0) or unregisters (pgid given as -pgid) a process group. Async-signal-safe: a
// child calls it between fork and exec. A no-op for fd < 0.
void guardian_message(int fd, pid_t pgid_or_minus);

// The guardian's pid in this process, 0 when none was started (tests).
pid_t launch_guardian_pid();

}  // namespace fp
