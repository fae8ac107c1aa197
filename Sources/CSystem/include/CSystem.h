#ifndef CSYSTEM_H
#define CSYSTEM_H
#include <stdint.h>

/// The Linux calls Glibc's Swift module does not export (epoll,
/// timerfd, sched_getaffinity), behind functions whose arguments are plain integers and one
/// plain struct. `struct epoll_event` is packed on x86_64 and natural
/// elsewhere; only the C compiler should know that, so Swift never sees it.

/// One readiness event: the epoll flags and the token given at registration.
typedef struct {
    uint32_t events;
    uint64_t token;
} csystem_epoll_event;

/// The interest and readiness flags (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP).
extern const uint32_t csystem_epoll_in;
extern const uint32_t csystem_epoll_out;
extern const uint32_t csystem_epoll_err;
extern const uint32_t csystem_epoll_hup;
/// EPOLLONESHOT and EPOLLET: the registration modes.
extern const uint32_t csystem_epoll_oneshot;
extern const uint32_t csystem_epoll_edge_triggered;

/// The `op` of epoll_ctl (EPOLL_CTL_ADD, EPOLL_CTL_DEL, EPOLL_CTL_MOD).
extern const int csystem_epoll_ctl_add;
extern const int csystem_epoll_ctl_del;
extern const int csystem_epoll_ctl_mod;

/// epoll_create1(EPOLL_CLOEXEC): a descriptor, or -1 with errno set.
int csystem_epoll_create(void);

/// epoll_ctl with `events` and `token` as the event: 0, or -1 with errno set.
int csystem_epoll_ctl(int epoll, int operation, int fd, uint32_t events, uint64_t token);

/// epoll_wait into `events` (at most `capacity`, which is capped at 1024):
/// the count, or -1 with errno set.
int csystem_epoll_wait(int epoll, csystem_epoll_event *events, int capacity, int timeout_milliseconds);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC): a descriptor, or -1 with errno set.
int csystem_eventfd_create(void);

/// Adds 1 to an eventfd's counter: 0, or -1 with errno set.
int csystem_eventfd_signal(int eventfd);

/// Names the calling thread (the kernel keeps at most 15 bytes), as
/// `ps`, `perf` and /proc show it: 0, or an error number.
int csystem_name_this_thread(const char *name);

/// Puts the calling thread under SCHED_BATCH (nice unchanged; no
/// privilege needed): 0, or an error number.
int csystem_schedule_this_thread_as_batch(void);

/// Whether the thread `thread_id` (a kernel thread id, as in
/// /proc/self/task) runs under SCHED_BATCH: 1, 0, or -1 with errno set.
int csystem_thread_is_batch(int thread_id);

/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC): a
/// descriptor, or -1 with errno set.
int csystem_timerfd_create_monotonic(void);

/// Arms `timer` to fire once at `due_nanoseconds` on CLOCK_MONOTONIC
/// (TFD_TIMER_ABSTIME; at once when it passed): 0, or -1 with errno set.
int csystem_timerfd_arm_absolute(int timer, uint64_t due_nanoseconds);

/// How many processors the calling thread may run on (sched_getaffinity:
/// `taskset`, a container's cpuset), or 0 when that cannot be read.
int csystem_affinity_processor_count(void);

#endif
