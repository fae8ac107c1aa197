#define _GNU_SOURCE
#include "CSystem.h"
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <string.h>
#include <time.h>

const uint32_t csystem_epoll_in = EPOLLIN;
const uint32_t csystem_epoll_out = EPOLLOUT;
const uint32_t csystem_epoll_err = EPOLLERR;
const uint32_t csystem_epoll_hup = EPOLLHUP;
const uint32_t csystem_epoll_oneshot = EPOLLONESHOT;
const uint32_t csystem_epoll_edge_triggered = EPOLLET;

const int csystem_epoll_ctl_add = EPOLL_CTL_ADD;
const int csystem_epoll_ctl_del = EPOLL_CTL_DEL;
const int csystem_epoll_ctl_mod = EPOLL_CTL_MOD;

int csystem_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int csystem_epoll_ctl(int epoll, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = { .events = events, .data = { .u64 = token } };
    return epoll_ctl(epoll, operation, fd, &event);
}

int csystem_epoll_wait(int epoll, csystem_epoll_event *events, int capacity, int timeout_milliseconds) {
    // The kernel fills its own layout; copying out keeps Swift away from it.
    struct epoll_event ready[1024];
    if (capacity > 1024) capacity = 1024;
    int count = epoll_wait(epoll, ready, capacity, timeout_milliseconds);
    for (int index = 0; index < count; index++) {
        events[index].events = ready[index].events;
        events[index].token = ready[index].data.u64;
    }
    return count;
}

int csystem_eventfd_create(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int csystem_eventfd_signal(int eventfd) {
    return eventfd_write(eventfd, 1);
}

int csystem_name_this_thread(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    return pthread_setname_np(pthread_self(), truncated);
}

int csystem_schedule_this_thread_as_batch(void) {
    struct sched_param parameter = { .sched_priority = 0 };
    return pthread_setschedparam(pthread_self(), SCHED_BATCH, &parameter);
}

int csystem_thread_is_batch(int thread_id) {
    int policy = sched_getscheduler(thread_id);
    if (policy < 0) return -1;
    return policy == SCHED_BATCH;
}

int csystem_timerfd_create_monotonic(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int csystem_timerfd_arm_absolute(int timer, uint64_t due_nanoseconds) {
    long nanoseconds = (long)(due_nanoseconds % 1000000000u);
    // A zero `it_value` would disarm the timer instead of firing it.
    if (due_nanoseconds / 1000000000u == 0 && nanoseconds == 0) nanoseconds = 1;
    struct itimerspec setting = {
        .it_interval = { 0, 0 },
        .it_value = { (time_t)(due_nanoseconds / 1000000000u), nanoseconds },
    };
    return timerfd_settime(timer, TFD_TIMER_ABSTIME, &setting, NULL);
}

int csystem_affinity_processor_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    return CPU_COUNT(&set);
}
