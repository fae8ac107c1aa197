import CSystem

/// Names the calling thread as the kernel shows it (`ps -L`, `perf`,
/// /proc/PID/task/TID/comm): Foundation's `Thread.name` does not reach the
/// kernel on Linux, so profiles of the server would show every thread
/// under the name of whichever thread created it.
public enum ThreadName {
    /// At most 15 bytes are kept.
    public static func set(_ name: String) {
        _ = csystem_name_this_thread(name)
    }
}
