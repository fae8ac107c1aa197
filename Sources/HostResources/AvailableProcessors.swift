import CSystem
import Glibc

/// How many processors this process may really use: the CPUs it may run
/// on (its affinity: `taskset`, a container's cpuset), and no more than
/// its cgroups' CPU quota allows (`docker run --cpus`, a Kubernetes CPU
/// limit), rounded up.
///
/// Why not `sysconf(_SC_NPROCESSORS_ONLN)` or Foundation's
/// `activeProcessorCount` (on Linux the same count): both count the
/// machine's CPUs, so a server limited to two CPUs on a 64-core host would
/// start 64 SQLite readers and HTTP threads that take turns on two, and on
/// two cores 16 readers served a third fewer deep pages than two
/// (docs/performance.md, "How many SQLite readers"). The HTTP threads and
/// both stores size themselves from this one count, so they agree.
public enum AvailableProcessors {
    /// What the count was made of, read once, at first use (a process's
    /// limits are set before it starts): the count and the start-up log's
    /// explanation come from the same reading.
    private struct Reading {
        let online: Int
        /// 0 when the affinity could not be read.
        let affinity: Int
        let quota: Double?

        static func now() -> Reading {
            Reading(online: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), affinity: Int(csystem_affinity_processor_count()),
                    quota: CgroupCPUQuota.ofThisProcess())
        }
    }

    private static let reading = Reading.now()

    public static let count = limited(affinity: reading.affinity, online: reading.online, quota: reading.quota)

    /// The affinity's count (or the online count when it could not be read),
    /// at most the quota rounded up, at least 1.
    static func limited(affinity: Int, online: Int, quota: Double?) -> Int {
        var processors = affinity > 0 ? affinity : online
        if let quota, quota > 0 {
            processors = min(processors, Int(quota.rounded(.up)))
        }
        return max(1, processors)
    }

    /// What `count` is made of, for the server's start-up log.
    public static var explanation: String {
        let affinity = reading.affinity > 0 ? "\(reading.affinity)" : "?"
        let quota = reading.quota.map { "a CPU quota of \(($0 * 100).rounded() / 100)" } ?? "no CPU quota"
        return "\(count) processor\(count == 1 ? "" : "s") available (\(reading.online) online, \(affinity) in this "
            + "process's affinity, \(quota))"
    }
}
