import Dispatch
import Foundation
import HTTPCore
import HistoryClient
import HistoryTestSupport
import Synchronization
import Testing

@Suite("history-server as a process")
struct ServerProcessTests {
    @Test func helpExitsZeroWithUsage() throws {
        let result = try ServerProcess.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE:"))
        #expect(result.stdout.contains("OPTIONS:"))
        #expect(result.stdout.contains("--access-log"))
    }

    /// `--version` prints the version alone (what a deployment script or a
    /// bug report asks for), and `--help` names both stores.
    @Test func versionPrintsTheVersionAndHelpNamesBothStores() throws {
        let version = try ServerProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "1.0.0\n", "\(version.stdout)")
        let help = try ServerProcess.run(["--help"])
        let overview = try #require(help.stdout.components(separatedBy: "USAGE:").first)
        #expect(overview.contains("SQLite") && overview.contains("PostgreSQL"), "\(overview)")
    }

    /// Tokens mode says so on the start-up line (an open-mode line is
    /// checked below): an operator sees at once whether anyone may act as
    /// an administrator.
    @Test func theStartupLineSaysTokensMode() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let keys = folder.url.appending(path: "keys").path
        try Data("k \(String(repeating: "s", count: 40))\n".utf8).write(to: URL(fileURLWithPath: keys))
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off",
                                                   "--jwt-hs256-secret-file", keys])
        defer { server.stop() }
        #expect(server.startupLine.contains(" in tokens mode, database "), "\(server.startupLine)")
    }

    @Test(arguments: [["--port", "http"], ["--durability", "sometimes"], ["--unknown"]])
    func badFlagsExitTwoWithAMessage(_ arguments: [String]) throws {
        let result = try ServerProcess.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("history-server: error: "), "\(result.stderr)")
        #expect(result.stderr.contains(arguments[0]))
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    /// A bad variable whose flag is given must not stop a corrected start.
    @Test func aFlagOverridesABadVariable() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"],
                                       environment: ["HISTORY_PORT": "abc"])
        defer { server.stop() }
        #expect(server.port > 0)
        let bad = try ServerProcess.run(["--database", folder.databasePath], environment: ["HISTORY_PORT": "abc"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("HISTORY_PORT"), "\(bad.stderr)")
    }

    /// A database that cannot be opened is one readable line and status 1.
    @Test func aDatabaseThatCannotBeOpenedExitsOneWithAReadableLine() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.url.appending(path: "a-file").path
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: file))
        for path in [file + "/history.sqlite", file] {
            let result = try ServerProcess.run(["--port", "0", "--database", path, "--access-log", "off"])
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("history-server: error: cannot open the database \(path): "), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!result.stderr.contains("storage(code:") && !result.stderr.contains("Error Domain"), "\(result.stderr)")
        }
    }

    /// A SQLite file is served by one process (docs/configuration.md): a
    /// second server on it is refused at start, in one line, and the first
    /// serves on; once the first is gone the file opens again.
    @Test func aSecondServerOnTheSameSQLiteFileExitsOneWithAReadableLine() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let first = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"])
        let second = try ServerProcess.run(["--port", "0", "--database", folder.databasePath, "--access-log", "off"])
        #expect(second.status == 1)
        #expect(second.stderr.hasPrefix("history-server: error: cannot open the database \(folder.databasePath): "),
                "\(second.stderr)")
        #expect(second.stderr.contains("one process serves a SQLite file at a time"), "\(second.stderr)")
        #expect(second.stderr.split(separator: "\n").count == 1, "\(second.stderr)")
        let client = try first.connect()
        #expect(try client.request(HTTPRequest(method: .get, target: "/healthz")).status == 200)
        client.close()
        first.stop()
        let again = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"])
        defer { again.stop() }
        let next = try again.connect()
        defer { next.close() }
        #expect(try next.request(HTTPRequest(method: .get, target: "/healthz")).status == 200)
    }

    @Test func printsOneLineWithAddressDatabaseAndVersion() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"])
        defer { server.stop() }
        #expect(server.startupLine == "history-server 1.0.0 listening on http://127.0.0.1:\(server.port) in open mode, database \(folder.databasePath)")
        let client = try server.connect()
        defer { client.close() }
        #expect(try client.request(HTTPRequest(method: .get, target: "/healthz")).status == 200)
        #expect(FileManager.default.fileExists(atPath: folder.databasePath))
    }

    /// A machine that starts processes with a soft limit of 256 open files
    /// must still let the server hold --max-connections connections: it
    /// raises its soft limit to the hard one.
    @Test func raisesTheOpenFileLimitToTheHardLimit() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var hard = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &hard) == 0)
        try #require(hard.rlim_max > 256, "the hard limit here is too low to tell a raise")
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"],
                                       openFileSoftLimit: 256)
        defer { server.stop() }
        let limits = try String(contentsOfFile: "/proc/\(server.processIdentifier)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        let expected = hard.rlim_max >= UInt(Int.max) ? "unlimited" : String(hard.rlim_max)
        #expect(fields.count >= 5 && String(fields[3]) == expected, "\(line)")
    }

    /// A hard limit of 128 open files and the default --max-connections
    /// (10,000): the server serves what fits beside its own files and
    /// answers the rest 503, instead of running out of descriptors (where
    /// SQLite cannot open a reader and libdispatch stops the process).
    @Test(.timeLimit(.minutes(2)))
    func connectionsBeyondTheOpenFileLimitGet503AndTheServerLives() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"],
                                       openFileLimit: 128)
        defer { server.stop() }
        #expect(server.stderrText.contains("at most 64 connections are served"), "\(server.stderrText)")
        let setup = try server.connect()
        defer { setup.close() }
        #expect(try setup.request(HTTPRequest(method: .post, target: "/v1/conversations",
                                                          headers: ["Content-Type": "application/json"], body: Array(#"{"id":"c"}"#.utf8))).status == 201)

        // 150 connections held open for a few rounds of requests, so the
        // process lives at its limit for seconds (libdispatch looks every second).
        var clients: [HTTPClientConnection] = []
        defer { for client in clients { client.close() } }
        var refused = 0
        for _ in 0..<150 {
            let client = try server.connect()
            let response = try client.request(HTTPRequest(method: .get, target: "/v1/conversations/c/messages"))
            if response.status == 503 {
                #expect(response.bodyText.contains("too_many_connections"))
                refused += 1
                client.close()
            } else {
                #expect(response.status == 200, "\(response.bodyText)")
                clients.append(client)
            }
        }
        #expect(refused > 0)
        for _ in 0..<3 {
            for client in clients {
                #expect(try client.request(HTTPRequest(method: .get, target: "/v1/conversations/c/messages")).status == 200)
            }
            Thread.sleep(forTimeInterval: 1)
        }
        #expect(server.isRunning)
        for client in clients { client.close() }
        clients.removeAll()
        #expect(eventually {
            guard let fresh = try? server.connect() else { return false }
            defer { fresh.close() }
            return (try? fresh.request(HTTPRequest(method: .get, target: "/v1/conversations/c/messages")).status) == 200
        })
    }

    @Test func accessLogWritesOneLinePerRequest() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath])
        defer { server.stop() }
        let client = try server.connect()
        defer { client.close() }
        _ = try client.request(HTTPRequest(method: .get, target: "/nope?x=1"))
        let logged = eventually { server.stdoutText.contains("GET /nope?x=1 404 ") }
        #expect(logged, "\(server.stdoutText)")
        // A request line that does not parse has no method or target: `-`
        // keeps the line's seven space-separated fields.
        let garbage = try server.connect()
        defer { garbage.close() }
        try garbage.sendRaw(Array("NOT A REQUEST\r\n\r\n".utf8))
        #expect(try garbage.receive().status == 400)
        let dashed = eventually { server.stdoutText.contains("Z - - 400 ") }
        #expect(dashed, "\(server.stdoutText)")
        for line in server.stdoutText.split(separator: "\n").dropFirst() {
            #expect(line.split(separator: " ", omittingEmptySubsequences: false).count == 7, "\(line)")
        }
    }

    /// SIGTERM: a parked long-poll is answered, then the process exits 0.
    @Test func sigtermAnswersParkedLongPollsAndExitsZero() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try ServerProcess(arguments: ["--port", "0", "--database", folder.databasePath, "--access-log", "off"])
        defer { server.stop() }
        let client = try server.connect(timeout: .seconds(30))
        defer { client.close() }
        #expect(try client.post("/v1/conversations", #"{"id":"term"}"#).status == 201)
        try client.send(HTTPRequest(method: .get, target: "/v1/conversations/term/events?wait=30"))
        let probe = try server.connect()
        defer { probe.close() }
        let parked = eventually {
            let metrics = (try? probe.request(HTTPRequest(method: .get, target: "/metrics")).bodyText) ?? ""
            return metrics.contains("history_parked_long_polls 1")
        }
        #expect(parked)
        probe.close()
        server.send(signal: SIGTERM)
        let answer = try client.receive()
        #expect(answer.status == 200)
        #expect(try answer.decode(HistoryEventBatch.self).version == 0)
        #expect(server.waitForExit(timeout: .seconds(15)) == 0, "\(server.stderrText)")
    }

    /// Guarantee 3: every message whose POST was answered 2xx survives `kill -9`.
    @Test func everyAnsweredPostSurvivesKillNine() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let arguments = ["--port", "0", "--database", folder.databasePath, "--access-log", "off", "--durability", "full"]
        let server = try ServerProcess(arguments: arguments)
        defer { server.stop() }
        let setup = try server.connect()
        #expect(try setup.post("/v1/conversations", #"{"id":"durable"}"#).status == 201)
        setup.close()

        let acknowledged = Mutex<[String: Int64]>([:])  // client_id -> id
        let group = DispatchGroup()
        for poster in 0..<4 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                guard let client = try? server.connect(timeout: .seconds(5)) else { return }
                defer { client.close() }
                for index in 0..<100_000 {
                    let clientID = "p\(poster)-\(index)"
                    let body = #"{"sender":"p\#(poster)","body":"message \#(index)","client_id":"\#(clientID)"}"#
                    guard let response = try? client.post("/v1/conversations/durable/messages", body),
                          (200..<300).contains(response.status),
                          let id = (try? response.decode(HistoryMessage.self))?.id else { return }
                    acknowledged.withLock { $0[clientID] = id }
                }
            }
        }
        // Kill mid-stream, once a good number of posts were answered.
        let enough = eventually { acknowledged.withLock { $0.count } >= 300 }
        #expect(enough)
        server.send(signal: SIGKILL)
        #expect(server.waitForExit(timeout: .seconds(10)) != nil)
        #expect(group.wait(timeout: .now() + .seconds(30)) == .success)
        let answered = acknowledged.withLock { $0 }

        let restarted = try ServerProcess(arguments: arguments)
        defer { restarted.stop() }
        let reader = try restarted.connect()
        defer { reader.close() }
        var stored: [String: Int64] = [:]
        var target = "/v1/conversations/durable/messages?limit=200"
        for _ in 0..<10_000 {
            let page = try reader.get(target).decode(HistoryPage.self)
            for message in page.messages {
                if let clientID = message.clientID { stored[clientID] = message.id }
            }
            guard page.hasOlder, let oldest = page.oldestID else { break }
            target = "/v1/conversations/durable/messages?limit=200&before=\(oldest)"
        }
        let missing = answered.filter { stored[$0.key] != $0.value }
        #expect(missing.isEmpty, "lost \(missing.count) of \(answered.count) answered posts")
        #expect(stored.count >= answered.count)
    }
}
