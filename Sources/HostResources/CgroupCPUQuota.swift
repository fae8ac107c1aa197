import Foundation

/// The CPU quota of this process's cgroups, in processors (1.5: one and a
/// half CPUs' time per period), the tightest along the way from its own
/// cgroup up to the root; nil when none is set.
///
/// Read from the files a container runtime writes: cgroup v2's `cpu.max`
/// (`150000 100000`, or `max 100000` for none), v1's `cpu.cfs_quota_us`
/// (-1 for none) over `cpu.cfs_period_us`. The cgroup's path comes from
/// `/proc/self/cgroup`; inside a container the controller is usually
/// mounted at its own cgroup, so the path does not exist under the mount
/// and only the mount's own files are there: walking up from the path to
/// the mount covers both layouts, as the JVM and Go runtimes do.
enum CgroupCPUQuota {
    static func ofThisProcess() -> Double? {
        quota(cgroups: read("/proc/self/cgroup"), root: "/sys/fs/cgroup", read: read)
    }

    /// `cgroups`: `/proc/self/cgroup`'s text; `root`: where the hierarchies
    /// are mounted (cgroup v2 at the root itself, v1 one folder per
    /// controller: `cpu`, `cpu,cpuacct`, `cpuacct,cpu`).
    static func quota(cgroups: String?, root: String, read: (String) -> String?) -> Double? {
        guard let cgroups else { return nil }
        var tightest: Double?
        func consider(_ quota: Double?) {
            guard let quota else { return }
            tightest = min(tightest ?? quota, quota)
        }
        for line in cgroups.split(separator: "\n") {
            // hierarchy-ID:controller-list:path
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let controllers = fields[1].split(separator: ",")
            let path = String(fields[2])
            if fields[0] == "0" && controllers.isEmpty {
                for folder in folders(from: root, along: path) {
                    consider(read(folder + "/cpu.max").flatMap(parseV2))
                }
            } else if controllers.contains("cpu") {
                for mount in ["cpu", "cpu,cpuacct", "cpuacct,cpu"].map({ root + "/" + $0 }) {
                    for folder in folders(from: mount, along: path) {
                        guard let quota = read(folder + "/cpu.cfs_quota_us"),
                              let period = read(folder + "/cpu.cfs_period_us") else { continue }
                        consider(parseV1(quota: quota, period: period))
                    }
                }
            }
        }
        return tightest
    }

    /// `mount` + `path`, then each parent up to `mount` itself.
    static func folders(from mount: String, along path: String) -> [String] {
        var components = path.split(separator: "/").map(String.init)
        var folders: [String] = []
        while true {
            folders.append(([mount] + components).joined(separator: "/"))
            guard !components.isEmpty else { return folders }
            components.removeLast()
        }
    }

    /// cgroup v2's `cpu.max`: `QUOTA PERIOD`, or `max PERIOD` for none.
    static func parseV2(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let quota = Double(fields[0]), let period = Double(fields[1]),
              quota > 0, period > 0 else { return nil }
        return quota / period
    }

    /// cgroup v1's quota and period in microseconds; a quota of -1 is none.
    static func parseV1(quota: String, period: String) -> Double? {
        guard let quota = Double(quota.trimmingCharacters(in: .whitespacesAndNewlines)),
              let period = Double(period.trimmingCharacters(in: .whitespacesAndNewlines)),
              quota > 0, period > 0 else { return nil }
        return quota / period
    }

    /// A small file's text; nil when it cannot be read.
    private static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).flatMap { String(bytes: $0, encoding: .utf8) }
    }
}
