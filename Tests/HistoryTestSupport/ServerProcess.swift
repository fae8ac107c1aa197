import Foundation
import HTTPCore
import Synchronization

/// The real `history-server` binary as a child process, for tests that need
/// a process to kill or signal, or the server exactly as deployed.
///
/// The binary sits next to the test bundle: a test target that uses this
/// depends on `HistoryServer`, so building the tests builds it.
public final class ServerProcess: Sendable {
    public static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "history-server")
    }

    public struct StartupFailed: Error, CustomStringConvertible {
        public let output: String
        public var description: String { "history-server did not print its line: \(output)" }
    }

    /// What the child wrote, filled by the pipes' readability handlers.
    private final class Output: Sendable {
        let bytes = Mutex<(stdout: [UInt8], stderr: [UInt8])>(([], []))
    }

    private let process: Process
    private let output = Output()
    /// Taken from the one start-up line.
    public let port: Int
    public let startupLine: String

    /// Starts `history-server` with `arguments` (and `environment` added to
    /// this process's) and waits (at most 30 s) for its line.
    /// With `openFileSoftLimit`, the child starts (through `sh`, which `exec`s
    /// it) with that soft limit on open files, as on a stingier machine; with
    /// `openFileLimit`, with that soft and hard limit (it cannot raise it).
    /// `environment` is added to this process's; `startupAddress` is how the
    /// start-up line names the address (the port follows it). With
    /// `launcher` (a command and its arguments, e.g. `taskset -c 0`), the
    /// server is started through it.
    public init(arguments: [String], environment: [String: String] = [:], openFileSoftLimit: Int? = nil,
                openFileLimit: Int? = nil, startupAddress: String = "http://127.0.0.1:",
                launcher: [String] = []) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw StartupFailed(output: "no binary at \(Self.binary.path): the test target must depend on HistoryServer")
        }
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let openFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", Self.binary.path] + arguments
        } else if let openFileSoftLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -Sn \(openFileSoftLimit) && exec \"$0\" \"$@\"", Self.binary.path] + arguments
        } else if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = launcher.dropFirst() + [Self.binary.path] + arguments
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
        // log can never fill a pipe and stall the server. At the end of a
        // pipe the handler removes itself: its Dispatch source then stops
        // watching the descriptor while the handle still holds it open.
        // Left on, the source fired at the end of input for as long as the
        // handle lived, and the handle closed the descriptor under it when
        // released (a crash in Dispatch's event loop, once, in a CI
        // rehearsal: the descriptor's number taken by another socket).
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            output.bytes.withLock { $0.stdout += data }
        }
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            output.bytes.withLock { $0.stderr += data }
        }
        try process.runSerialized()

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

    /// A new keep-alive connection (the socket timeout as `RunningServer.connect`'s).
    public func connect(timeout: Duration = .seconds(60)) throws -> HTTPClientConnection {
        try HTTPClientConnection(host: "127.0.0.1", port: port, timeout: timeout)
    }

    public var stderrText: String { output.bytes.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
    public var stdoutText: String { output.bytes.withLock { String(decoding: $0.stdout, as: UTF8.self) } }

    public var processIdentifier: Int32 { process.processIdentifier }

    public var isRunning: Bool { process.isRunning }

    public func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// The exit status once the process has ended, nil if it runs past `timeout`.
    public func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Kills the process if still running; always safe to call.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs the binary to completion (for `--help` and bad flags) and returns its status and output.
    public static func run(_ arguments: [String], environment: [String: String] = [:],
                           timeout: Duration = .seconds(30)) throws -> (status: Int32?, stdout: String, stderr: String) {
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.executableURL = binary
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.runSerialized()
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
