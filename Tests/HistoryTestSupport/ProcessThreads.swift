import Foundation

/// The threads of this process as the kernel lists them (/proc/self/task),
/// for tests of what the kernel sees of a thread: its name, its policy.
public enum ProcessThreads {
    /// The kernel ids of the threads whose name starts with `prefix`.
    public static func ids(namedWithPrefix prefix: String) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> Int32? in
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  name.hasPrefix(prefix) else { return nil }
            return Int32(task)
        }
    }
}
