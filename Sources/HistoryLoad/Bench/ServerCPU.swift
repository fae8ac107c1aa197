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
}
