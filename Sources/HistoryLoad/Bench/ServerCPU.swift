import Foundation
import Glibc

/// The server's CPU time (user + system, `/proc/PID/stat`), read around a
/// bench row to give its CPU per request, as scripts/cpu_seconds.py does
/// for the shell benches.
enum ServerCPU {
    /// Seconds of CPU `pid` used so far; nil when it cannot be read.
    static func seconds(pid: Int32) -> Double? {
        guard let stat = ServerMemory.readSmallFile("/proc/\(pid)/stat"),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Seconds of CPU a PostgreSQL postmaster and its backends used so far:
    /// its own, its exited children's (`cutime`, `cstime`) and each live
    /// child's (a backend lives as long as its session). Nil when the
    /// postmaster cannot be read.
    static func databaseSeconds(postmaster pid: Int32) -> Double? {
        guard let own = ticks(pid, withChildren: true) else { return nil }
        var total = own
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") {
            for entry in entries {
                guard let child = Int32(entry), child != pid, parent(of: child) == pid,
                      let used = ticks(child, withChildren: false) else { continue }
                total += used
            }
        }
        return total / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields after "pid (comm)": state is index 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
    private static func statFields(_ pid: Int32) -> [Substring]? {
        guard let stat = ServerMemory.readSmallFile("/proc/\(pid)/stat"),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    private static func parent(of pid: Int32) -> Int32? {
        guard let fields = statFields(pid), fields.count > 1 else { return nil }
        return Int32(fields[1])
    }

    private static func ticks(_ pid: Int32, withChildren: Bool) -> Double? {
        guard let fields = statFields(pid), fields.count > 14 else { return nil }
        let used = [11, 12] + (withChildren ? [13, 14] : [])
        return used.reduce(0.0) { $0 + (Double(fields[$1]) ?? 0) }
    }
}
