import Foundation
import Glibc
import Synchronization

/// The server's resident memory, read from /proc: the process is measured,
/// not a counter it keeps about itself.
enum ServerMemory {
    /// `VmRSS` of `pid` in bytes, nil when the process is gone or unreadable.
    /// (`VmHWM` is the peak over the process's whole life, so a phase's peak
    /// comes from sampling `VmRSS` through it.)
    static func residentBytes(pid: Int32) -> UInt64? {
        guard let status = readSmallFile("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst(6).filter(\.isNumber)
            return UInt64(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// The process listening on TCP `port` on this machine (best effort):
    /// the socket's inode from /proc/net/tcp and tcp6, then the process
    /// holding a descriptor on it among those this user may look into.
    static func pid(listeningOn port: Int) -> Int32? {
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = readSmallFile(table, limit: 16 << 20) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // sl local_address rem_address st ... inode; st 0A is LISTEN.
                guard fields.count > 9, fields[3] == "0A", let colon = fields[1].lastIndex(of: ":"),
                      Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port else { continue }
                inodes.insert("socket:[\(fields[9])]")
            }
        }
        guard !inodes.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        let own = getpid()
        for entry in entries {
            guard let pid = Int32(entry), pid != own,
                  let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd") else { continue }
            for descriptor in descriptors {
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(descriptor)"),
                   inodes.contains(target) {
                    return pid
                }
            }
        }
        return nil
    }

    /// A /proc file whole: they report a size of 0, so read until the end.
    static func readSmallFile(_ path: String, limit: Int = 1 << 20) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Samples the server's `VmRSS` every 50 ms on a thread of its own until
/// stopped, keeping the highest.
final class ResidentMemorySampler: Sendable {
    let pid: Int32
    private let peak = Atomic<UInt64>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(pid: Int32) {
        self.pid = pid
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                sample()
                Thread.sleep(forTimeInterval: 0.05)
            }
            sample()
            finished.signal()
        }
        thread.start()
    }

    private func sample() {
        if let bytes = ServerMemory.residentBytes(pid: pid) { _ = peak.max(bytes, ordering: .relaxed) }
    }

    /// Stops sampling; the highest `VmRSS` seen in bytes, nil when none could be read.
    func stop() -> UInt64? {
        stopped.store(true, ordering: .releasing)
        finished.wait()
        let value = peak.load(ordering: .relaxed)
        return value > 0 ? value : nil
    }
}
