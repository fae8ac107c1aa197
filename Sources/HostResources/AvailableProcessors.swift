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
    /// Read once, at first use (a process's limits are set before it starts).
    public static let count: Int = {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return limited(affinity: Int(csystem_affinity_processor_count()), online: online,
                       quota: CgroupCPUQuota.ofThisProcess())
    }()

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
        let affinity = Int(csystem_affinity_processor_count())
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let quota = CgroupCPUQuota.ofThisProcess().map { "a CPU quota of \(($0 * 100).rounded() / 100)" } ?? "no CPU quota"
        return "\(count) processor\(count == 1 ? "" : "s") available (\(online) online, \(affinity > 0 ? "\(affinity)" : "?") in this process's affinity, \(quota))"
    }
}
