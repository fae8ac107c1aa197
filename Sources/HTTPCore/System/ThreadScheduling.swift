import CSystem

/// How the kernel schedules the threads that serve requests.
///
/// The HTTP workers and the read pool run under `SCHED_BATCH`: the same
/// share of the processors as any thread of nice 0, but a worker woken
/// (a request arrived, a read's rows came back) does not preempt the
/// thread running on that processor; it runs when that thread blocks or
/// its slice ends. On two cores, pages keep many threads of ours and
/// PostgreSQL's backends runnable at once, and a wake-up could cut into
/// whoever ran, PostgreSQL's backend in the middle of the next page
/// statement included. Under `SCHED_BATCH` the thread that runs finishes
/// its turn: PostgreSQL's backends were preempted 0.22–0.25 times per
/// deep page before, 0.05 after; the server itself 0.56, then 0.35.
/// Alternated against the same build without it, deep pages on
/// PostgreSQL came 2% to 21% more a second, with a lower p99, in each of
/// nine rounds, and SQLite's 2% to 5% more in three (docs/performance.md,
/// "Request threads under SCHED_BATCH").
///
/// Only these threads set it. Linux gives a new thread its creator's
/// policy, and Dispatch starts its pool's threads from whichever thread
/// needs one, so some of the threads that run Dispatch's queues (the
/// writers', the listeners', timers) inherit it from a request thread and
/// others do not (3 of 6 after a run of pages, appends and long-polls).
/// That is the state every figure above was measured in; SQLite's
/// appends alone, alternated, showed no difference.
public enum ThreadScheduling {
    /// Best effort: where the policy cannot be set (a seccomp profile that
    /// forbids it), the thread runs as it was.
    public static func runThisThreadAsBatch() {
        _ = csystem_schedule_this_thread_as_batch()
    }

    /// Whether the kernel thread `threadID` (0: the calling thread) runs
    /// under `SCHED_BATCH`; nil when it cannot be read (no such thread).
    public static func isBatch(threadID: Int32) -> Bool? {
        switch csystem_thread_is_batch(threadID) {
        case 1: true
        case 0: false
        default: nil
        }
    }
}
