import Dispatch
import Foundation
import HTTPCore
@testable import HistoryAPI
import HistoryStore
import HistorySQLite
import HistoryTestSupport
import HistoryWiring
import Testing

/// docs/API.md, "Behind a proxy": whom limits and the access log count
/// when a proxy forwards for its clients, and the open-mode guard.
@Suite("Behind a proxy")
struct TrustedProxyTests {
    /// The burst of `limited`: a client that has not read yet passes at
    /// least this many reads before its first 429.
    private static let burst = 4

    /// One read a second per client, a burst of `burst`. What these tests
    /// compare is how many reads pass before a client's first 429: a fresh
    /// client passes at least the burst, one whose bucket was just drained
    /// fewer (its bucket refills one read a second, so only a machine
    /// stalled for `burst` seconds could hide the difference). Comparing
    /// exact answer sequences instead failed once in CI, where a stall of
    /// half a second refilled a bucket between two reads.
    private static func limited(trusting proxies: [String]) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.insecureNoAuth = true
            configuration.rateLimitReads = 1
            configuration.rateLimitBurst = burst
            configuration.trustedProxies = proxies.compactMap(IPNetwork.init)
        }
    }

    /// How many reads claiming `forwardedFor` pass (404: the conversation
    /// does not exist) before one is refused 429; nil when none is refused
    /// within a bound far above the burst.
    private static func readsBeforeRefusal(_ client: HTTPClientConnection, forwardedFor: String,
                                           header: String = "X-Forwarded-For") throws -> Int? {
        for passed in 0..<(4 * burst) {
            let status = try client.call(.get, "/v1/conversations/c", headers: [(header, forwardedFor)]).status
            if status == 429 { return passed }
            #expect(status == 404)
        }
        return nil
    }

    @Test func aTrustedProxysClientsAreCountedApart() throws {
        try withOpenServer(Self.limited(trusting: ["127.0.0.0/8"])) { server in
            let client = try server.connect()
            defer { client.close() }
            func passes(_ value: String, header: String = "X-Forwarded-For") throws -> Int {
                try #require(try Self.readsBeforeRefusal(client, forwardedFor: value, header: header))
            }
            #expect(try passes("203.0.113.1") >= Self.burst)
            #expect(try passes("203.0.113.2") >= Self.burst)
            // `Forwarded: for=` names the client the same way.
            #expect(try passes(#"for="[2001:db8:9::1]:4711";proto=http"#, header: "Forwarded") >= Self.burst)
            // The last hop that is not a trusted proxy is the client: a
            // client cannot pick its own address by writing one in front.
            #expect(try passes("198.51.100.7, 203.0.113.1") < Self.burst)
            // IPv6 clients count by their /64.
            #expect(try passes("2001:db8:1:2::a") >= Self.burst)
            #expect(try passes("2001:db8:1:2:ffff::b") < Self.burst)
            #expect(try passes("2001:db8:1:3::a") >= Self.burst)
        }
    }

    @Test func anUntrustedPeersForwardingHeadersAreIgnored() throws {
        try withOpenServer(Self.limited(trusting: ["10.0.0.0/8"])) { server in
            let client = try server.connect()
            defer { client.close() }
            #expect(try Self.readsBeforeRefusal(client, forwardedFor: "203.0.113.1").map { $0 >= Self.burst } == true)
            // Another claimed address is still the same peer, 127.0.0.1.
            #expect(try Self.readsBeforeRefusal(client, forwardedFor: "203.0.113.2").map { $0 < Self.burst } == true)
        }
    }

    /// Open mode behind a proxy would make everyone an administrator.
    @Test func openModeRefusesProxiedRequestsUnlessTold() throws {
        try withOpenServer({ _ in }) { server in
            let client = try server.connect()
            defer { client.close() }
            for header in ["X-Forwarded-For", "Forwarded"] {
                let value = header == "Forwarded" ? "for=203.0.113.1" : "203.0.113.1"
                expectError(try client.call(.get, "/v1/conversations/c", headers: [(header, value)]), 403, "forbidden")
            }
            expectError(try client.call(.get, "/v1/conversations/c"), 404, "conversation_not_found")
        }
        try withOpenServer({ $0.insecureNoAuth = true }) { server in
            let client = try server.connect()
            defer { client.close() }
            expectError(try client.call(.get, "/v1/conversations/c", headers: [("X-Forwarded-For", "203.0.113.1")]),
                        404, "conversation_not_found")
        }
    }

    @Test func hopsAreReadRightToLeft() {
        let addressing = ClientAddressing(trustedProxies: ["127.0.0.1", "10.0.0.0/8"].compactMap(IPNetwork.init))
        func client(_ value: String, header: String = "X-Forwarded-For", peer: String = "127.0.0.1:5000") -> String? {
            let request = HTTPRequest(method: .get, target: "/", headers: [header: value])
            return addressing.forwardedClient(of: request, remoteAddress: peer)?.description
        }
        #expect(client("203.0.113.1") == "203.0.113.1")
        #expect(client("198.51.100.1, 203.0.113.1, 10.1.2.3") == "203.0.113.1")
        #expect(client("203.0.113.1:8080") == "203.0.113.1")
        #expect(client("[2001:db8::1]:8080") == "2001:db8::1")
        #expect(client("garbage, 10.1.2.3") == "10.1.2.3")
        #expect(client("for=192.0.2.60;proto=http, for=10.0.0.1", header: "Forwarded") == "192.0.2.60")
        #expect(client("for=unknown", header: "Forwarded") == nil)
        #expect(client("203.0.113.1", peer: "192.0.2.1:5000") == nil)
        #expect(client("203.0.113.1", peer: "[::1]:5000") == nil)
    }

    @Test func limitKeysOfAddresses() {
        #expect(IPAddress("2001:db8:1:2:3:4:5:6")?.limitKey == "2001:db8:1:2::/64")
        #expect(IPAddress("::ffff:192.0.2.1")?.limitKey == "192.0.2.1")
        #expect(IPAddress("192.0.2.1")?.limitKey == "192.0.2.1")
        #expect(IPNetwork("10.0.0.0/8")?.contains(IPAddress("10.200.1.1")!) == true)
        #expect(IPNetwork("10.0.0.0/8")?.contains(IPAddress("11.0.0.1")!) == false)
        #expect(IPNetwork("2001:db8::/32")?.contains(IPAddress("2001:db8:ffff::1")!) == true)
        #expect(IPNetwork("2001:db8::/33")?.contains(IPAddress("2001:db8:ffff::1")!) == false)
        #expect(IPNetwork("10.0.0.0/33") == nil)
        #expect(IPNetwork("nonsense") == nil)
    }

    /// The access log writes the forwarded client, and masks credentials
    /// sent by mistake in the query.
    @Test func theAccessLogWritesTheClientAndMasksTokens() throws {
        var descriptors: [Int32] = [0, 0]
        try #require(pipe(&descriptors) == 0)
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        defer {
            close(readEnd)
            close(writeEnd)
        }
        try #require(fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK) == 0)
        try withTemporaryDirectory { folder in
            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(
                path: folder.url.appending(path: "history.sqlite").path, durability: .normal))
            defer { store.close() }
            let accessLog = AccessLog(fileDescriptor: writeEnd)
            let api = APIResponder(store: store, metrics: Metrics(), logger: Logger(level: .error), accessLog: accessLog,
                                   clients: ClientAddressing(trustedProxies: [IPNetwork("127.0.0.1")!]))
            let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                                    responder: api, observer: api)
            try server.start()
            defer {
                let done = DispatchSemaphore(value: 0)
                server.shutdown(gracePeriod: .seconds(2)) { done.signal() }
                done.wait()
            }
            let client = try HTTPClientConnection(port: server.port)
            defer { client.close() }
            _ = try client.call(.get, "/healthz?access_token=SECRET1&x=1", headers: [("X-Forwarded-For", "203.0.113.9")])
            _ = try client.call(.get, "/healthz?Token=SECRET2")
            _ = try client.call(.get, "/healthz?acc%65ss_token=SECRET3&limit=5")
            var output = ""
            let deadline = Date().addingTimeInterval(10)
            while output.split(separator: "\n").count < 3 && Date() < deadline {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(readEnd, &buffer, buffer.count)
                if count > 0 { output += String(decoding: buffer[..<count], as: UTF8.self) } else { usleep(20_000) }
            }
            let lines = output.split(separator: "\n")
            #expect(lines.count == 3, "\(output)")
            #expect(!output.contains("SECRET"), "\(output)")
            #expect(lines.first?.contains("GET /healthz?access_token=***&x=1 200 ") == true, "\(output)")
            #expect(lines.first?.hasSuffix("us 203.0.113.9") == true, "\(output)")
            #expect(lines.dropFirst().first?.contains("/healthz?Token=*** 200 ") == true, "\(output)")
            #expect(lines.dropFirst().first?.hasSuffix("us 127.0.0.1") == true, "\(output)")
            #expect(lines.last?.contains("/healthz?acc%65ss_token=***&limit=5 ") == true, "\(output)")
        }
    }
}
