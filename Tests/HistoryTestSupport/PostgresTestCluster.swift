import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server for one test or suite: `initdb` into a new
/// temporary folder, its Unix socket in that folder, TCP on a free port of
/// 127.0.0.1, started and stopped with `pg_ctl`.
///
/// `initdb` and `pg_ctl` refuse to run as root (a server process must not be
/// able to write every file on the machine), so when the tests run as root
/// they run as `nobody` through `runuser`, in a folder handed to `nobody`;
/// the tests themselves connect over the socket, which root may always use.
/// Authentication is `trust` (only this folder's owner and root can reach
/// the socket, and TCP listens on loopback only), the superuser is
/// `postgres`, the locale `C` (text compares byte by byte) and `fsync` is off:
/// tests kill server processes, never the machine, and only a machine crash
/// needs the flush.
///
/// Prefer `withPostgresCluster { }` or the `.postgresCluster` trait, which
/// stop it and delete its folder however the tests end.
///
/// Binaries are found in `$POSTGRES_BIN_DIR`, else next to the `initdb`
/// on `PATH`, else in the newest `/usr/lib/postgresql/*/bin` (Debian's
/// `postgresql` package), else in `pg_config --bindir`.
public final class PostgresTestCluster: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// How `stop` ends the server (`pg_ctl -m`).
    public enum StopMode: String, Sendable {
        /// Disconnect every session, then a clean shutdown.
        case fast
        /// No shutdown at all, as a crash would leave it: the next start recovers from WAL.
        case immediate
    }

    /// The cluster's folder: `data/`, the socket, `postgres.log`.
    public let directory: URL
    /// The TCP port on 127.0.0.1, which also names the Unix socket.
    public let port: Int
    public let superuser = "postgres"
    private let binDirectory: URL
    /// The unprivileged user the server runs as when the tests run as root.
    private let serverUser: String?
    private let isRunning = Mutex(false)

    /// The cluster that `.postgresCluster` started for the running suite.
    @TaskLocal public static var current: PostgresTestCluster?

    /// Creates and starts a cluster; call `destroy()` when done.
    public static func start() throws -> PostgresTestCluster {
        let binDirectory = try findBinDirectory()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("history-pg-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var serverUser: String?
        if geteuid() == 0 {
            guard let nobody = getpwnam("nobody") else {
                throw Failure(description: "running as root, and there is no user 'nobody' to run PostgreSQL as")
            }
            guard chown(directory.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else {
                throw Failure(description: "cannot hand \(directory.path) to nobody: errno \(errno)")
            }
            serverUser = "nobody"
        }
        var lastFailure: (any Error)?
        // A port found free may be taken before the server binds it: try
        // another, a few times.
        for _ in 0..<4 {
            let cluster = PostgresTestCluster(directory: directory, port: try freePort(),
                                              binDirectory: binDirectory, serverUser: serverUser)
            do {
                if !FileManager.default.fileExists(atPath: cluster.dataDirectory) {
                    try cluster.initdb()
                }
                try cluster.start()
                return cluster
            } catch {
                lastFailure = error
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastFailure ?? Failure(description: "the cluster did not start")
    }

    private init(directory: URL, port: Int, binDirectory: URL, serverUser: String?) {
        self.directory = directory
        self.port = port
        self.binDirectory = binDirectory
        self.serverUser = serverUser
    }

    private var dataDirectory: String { directory.appendingPathComponent("data").path }
    private var logPath: String { directory.appendingPathComponent("postgres.log").path }

    /// A libpq URI for `database` over the Unix socket.
    public func uri(database: String = "postgres") -> String {
        "postgresql://\(superuser)@/\(database)?host=\(directory.path)&port=\(port)"
    }

    /// A libpq URI for `database` over TCP on 127.0.0.1.
    public func tcpURI(database: String = "postgres") -> String {
        "postgresql://\(superuser)@127.0.0.1:\(port)/\(database)"
    }

    // MARK: - Life cycle

    private func initdb() throws {
        try run("initdb", ["-D", dataDirectory, "-U", superuser, "--auth=trust", "--encoding=UTF8",
                           "--locale=C", "--no-sync", "--no-instructions"])
    }

    /// Starts the server (again, after `stop`) and waits until it accepts
    /// connections. `track_activity_query_size` holds the store's longest
    /// statements whole in `pg_stat_activity`, where tests read what a
    /// session is running (the default keeps only the first 1 KiB).
    public func start() throws {
        let options = "-p \(port) -k '\(directory.path)' -c listen_addresses=127.0.0.1 -c fsync=off"
            + " -c max_connections=400 -c shared_buffers=32MB -c track_activity_query_size=8192"
        do {
            try run("pg_ctl", ["-D", dataDirectory, "-l", logPath, "-w", "-t", "120", "-o", options, "start"])
        } catch {
            throw Failure(description: "\(error)\n--- postgres.log ---\n\(serverLog)")
        }
        isRunning.withLock { $0 = true }
    }

    /// Stops the server; `start()` brings it back with the same data.
    public func stop(mode: StopMode = .fast) throws {
        try run("pg_ctl", ["-D", dataDirectory, "-m", mode.rawValue, "-w", "-t", "120", "stop"])
        isRunning.withLock { $0 = false }
    }

    /// Stops the server if it runs and deletes its folder.
    public func destroy() {
        if isRunning.withLock({ $0 }) { try? stop(mode: .immediate) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's log so far, for failure messages.
    public var serverLog: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "(no log)"
    }

    // MARK: - Databases

    /// Creates a new, empty database and returns its URI (over the socket).
    public func createDatabase() throws -> String {
        let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri(), "-c", "CREATE DATABASE \(name)"],
                asServerUser: false)
        return uri(database: name)
    }

    // MARK: - Processes

    /// Runs one of the PostgreSQL binaries to its end; throws with its
    /// output when it fails.
    ///
    /// Spawned directly rather than with Foundation's `Process`: `pg_ctl
    /// start` leaves a server running, and that server would inherit the
    /// descriptor `Process` watches to learn that its child ended, so the
    /// wait would never end. Here the child gets stdin, its output file, and
    /// no other descriptor of this process.
    private func run(_ tool: String, _ arguments: [String], asServerUser: Bool = true) throws {
        let executable = binDirectory.appendingPathComponent(tool).path
        var argv = [executable] + arguments
        if asServerUser, let serverUser {
            argv = ["/usr/sbin/runuser", "-u", serverUser, "--"] + argv
        }
        // In the cluster's folder, which the server's user can always read.
        argv = ["/bin/sh", "-c", "cd -- \"$1\" && shift && exec \"$@\"", "sh", directory.path] + argv
        // PG* variables of the caller's shell would redirect the tools.
        let environment = ProcessInfo.processInfo.environment
            .filter { !$0.key.hasPrefix("PG") }
            .map { "\($0.key)=\($0.value)" }
        let outputPath = directory.appendingPathComponent("\(tool).out").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        if let closeFrom = Self.closeFrom {
            _ = closeFrom(&actions, 3)
        }

        var pid = pid_t()
        let spawned = Self.withCStrings(argv) { argv in
            Self.withCStrings(environment) { environment in
                ProcessLaunches.serialized { posix_spawn(&pid, argv[0]!, &actions, nil, argv, environment) }
            }
        }
        guard spawned == 0 else {
            throw Failure(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw Failure(description: "waitpid \(tool): errno \(errno)") }
        }
        // WIFEXITED and WEXITSTATUS, which are macros Swift cannot import.
        let exitedNormally = status & 0x7F == 0
        let exitCode = (status >> 8) & 0xFF
        guard exitedNormally, exitCode == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let how = exitedNormally ? "exited with \(exitCode)" : "was killed by signal \(status & 0x7F)"
            throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) \(how): \(text)")
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later),
    /// looked up at run time because its header hides it behind
    /// `_GNU_SOURCE`. Without it the child may inherit descriptors other
    /// threads opened without close-on-exec.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Calls `body` with a NULL-terminated array of C strings.
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let duplicates = strings.map { strdup($0) } + [nil]
        defer { duplicates.forEach { free($0) } }
        return body(duplicates)
    }

    private static func findBinDirectory() throws -> URL {
        let fileManager = FileManager.default
        func hasTools(_ directory: URL) -> Bool {
            ["initdb", "pg_ctl", "psql"].allSatisfy {
                fileManager.isExecutableFile(atPath: directory.appendingPathComponent($0).path)
            }
        }
        var candidates: [URL] = []
        if let configured = ProcessInfo.processInfo.environment["POSTGRES_BIN_DIR"] {
            candidates.append(URL(fileURLWithPath: configured))
        }
        for entry in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let initdb = URL(fileURLWithPath: String(entry)).appendingPathComponent("initdb")
            if fileManager.isExecutableFile(atPath: initdb.path) {
                candidates.append(initdb.resolvingSymlinksInPath().deletingLastPathComponent())
            }
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.compactMap(Int.init).sorted(by: >) {
            candidates.append(URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin"))
        }
        if let found = candidates.first(where: hasTools) { return found }
        throw Failure(description: "no PostgreSQL server binaries (initdb, pg_ctl, psql) found: install "
            + "Debian's postgresql package, or set POSTGRES_BIN_DIR")
    }

    /// A TCP port of 127.0.0.1 that nothing listens on now.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs `body` with a new cluster, then stops the cluster and deletes its
/// folder, whether `body` returns or throws.
@discardableResult
public func withPostgresCluster<T>(_ body: (PostgresTestCluster) async throws -> T) async throws -> T {
    let cluster = try PostgresTestCluster.start()
    defer { cluster.destroy() }
    return try await body(cluster)
}

/// Runs `body` with the URI of a new, empty database in the cluster of the
/// running suite (see `.postgresCluster`), so tests running in parallel do
/// not see each other's tables.
@discardableResult
public func withTestDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
    guard let cluster = PostgresTestCluster.current else {
        throw PostgresTestCluster.Failure(description: "no cluster: the suite needs the .postgresCluster trait")
    }
    return try await body(try cluster.createDatabase())
}
