import Foundation

/// A new folder under the system's temporary directory, for one test's
/// files (a SQLite database and its WAL); `remove()` deletes it.
///
/// Prefer `withTemporaryDirectory`, which removes it whatever the body does.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("history-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Where a test's database goes: `history.sqlite` in the folder.
    public var databasePath: String { url.appendingPathComponent("history.sqlite").path }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a new temporary folder and removes the folder afterwards,
/// whether `body` returns or throws.
@discardableResult
public func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory)
}

/// The same for an async body.
@discardableResult
public func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}
