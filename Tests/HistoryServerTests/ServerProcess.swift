import Foundation
import HTTPCore
import Synchronization
import Testing

/// The real `history-server` binary as a child process, for tests that need
/// a process to kill or signal.
///
/// The binary sits next to the test bundle: the test target depends on
/// `HistoryServer`, so building the tests builds it.
final class ServerProcess: Sendable {
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "history-server")
    }

    struct StartupFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "history-server did not print its line: \(output)" }
    }

    /// What the child wrote, filled by the pipes' readability handlers.
    private final class Output: Sendable {
        let bytes = Mutex<(stdout: [UInt8], stderr: [UInt8])>(([], []))
    }

    private let process: Process
    private let output = Output()
    /// Taken from the one start-up line.
    let port: Int
    let startupLine: String

    /// Starts `history-server` with `arguments` (and `environment` added to
    /// this process's) and waits (at most 30 s) for its line.
    /// With `openFileSoftLimit`, the child starts (through `sh`, which `exec`s
    /// it) with that soft limit on open files, as on a stingier machine; with
    /// `openFileLimit`, with that soft and hard limit (it cannot raise it).
    /// `environment` is added to this process's; `startupAddress` is how the
    /// start-up line names the address (the port follows it).
    init(arguments: [String], environment: [String: String] = [:], openFileSoftLimit: Int? = nil,
         openFileLimit: Int? = nil, startupAddress: String = "http://127.0.0.1:") throws {
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let openFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", Self.binary.path] + arguments
        } else if let openFileSoftLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -Sn \(openFileSoftLimit) && exec \"$0\" \"$@\"", Self.binary.path] + arguments
        } else {
            process.executableURL = Self.binary
            process.arguments = arguments
        }
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        self.process = process
        let output = output
        // Drain both pipes for the whole life of the process, so the access
        // log can never fill a pipe and stall the server.
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.bytes.withLock { $0.stdout += data }
        }
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.bytes.withLock { $0.stderr += data }
        }
        try process.run()

        var line: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while line == nil && ContinuousClock.now < deadline && process.isRunning {
            line = output.bytes.withLock { output in
                output.stdout.firstIndex(of: UInt8(ascii: "\n")).map { String(decoding: output.stdout[..<$0], as: UTF8.self) }
            }
            if line == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        guard let line, let range = line.range(of: startupAddress),
              let port = Int(line[range.upperBound...].prefix { $0.isNumber }) else {
            if process.isRunning { process.interrupt() }
            let text = output.bytes.withLock { String(decoding: $0.stdout + $0.stderr, as: UTF8.self) }
            throw StartupFailed(output: text)
        }
        self.port = port
        startupLine = line
    }

    func connect(timeout: Duration = .seconds(10)) throws -> HTTPClientConnection {
        try HTTPClientConnection(host: "127.0.0.1", port: port, timeout: timeout)
    }

    var stderrText: String { output.bytes.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
    var stdoutText: String { output.bytes.withLock { String(decoding: $0.stdout, as: UTF8.self) } }

    var processIdentifier: Int32 { process.processIdentifier }

    var isRunning: Bool { process.isRunning }

    func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// The exit status once the process has ended, nil if it runs past `timeout`.
    func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Kills the process if still running; always safe to call.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs the binary to completion (for `--help` and bad flags) and returns its status and output.
    static func run(_ arguments: [String], environment: [String: String] = [:],
                    timeout: Duration = .seconds(30)) throws -> (status: Int32?, stdout: String, stderr: String) {
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.executableURL = binary
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (nil, "", "")
        }
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, out, err)
    }
}

/// A temporary folder removed when the test is done with it.
struct TemporaryFolder: ~Copyable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "history-server-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    var databasePath: String { url.appending(path: "history.sqlite").path }
}

extension HTTPClientResponse {
    var text: String { String(decoding: body, as: UTF8.self) }

    func object() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }
}

extension HTTPClientConnection {
    func post(_ target: String, _ json: String) throws -> HTTPClientResponse {
        let body = Array(json.utf8)
        return try request(HTTPRequest(method: .post, target: target,
                                       headers: ["Content-Length": "\(body.count)", "Content-Type": "application/json"], body: body))
    }
}

/// Polls `condition` every 10 ms for at most `seconds`; true when it held.
func eventually(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}
