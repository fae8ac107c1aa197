import Dispatch
import Foundation
import HTTPCore
import HistoryAPI
import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing

/// On PostgreSQL a newest or `before` page that waits for its statement
/// holds no thread (`HistoryStore.page(…completion:)`), over real sockets:
/// one page statement at a time, the first held open by the test (its
/// `onPageStatement` waits at a gate, so the statement's place stays
/// taken), a server of two HTTP threads of which one may block, and a read
/// pool of one thread. Pages that queue behind the held statement leave
/// the pool's thread free, so another read is answered meanwhile; when
/// the gate opens, every page is answered with its own rows.
@Suite("On PostgreSQL, pages that wait for their statement hold no thread", .postgresCluster)
struct PagesAnsweredLaterTests {
    @Test(.timeLimit(.minutes(2)))
    func pagesQueuedBehindAHeldStatementLeaveTheReadPoolFree() async throws {
        try await withTestDatabase { uri in
            let gate = DispatchSemaphore(value: 0)
            let statements = Mutex<[Int]>([])
            let store = try PostgresHistoryStore(configuration: PostgresStoreConfiguration(
                uri: uri, readerCount: 4, pageStatements: 1,
                onPageStatement: { pages in
                    let first = statements.withLock { statements in
                        statements.append(pages)
                        return statements.count == 1
                    }
                    if first { gate.wait() }
                }))
            defer { store.close() }
            #expect(store.readsPagesLater)
            try withInProcessServer(store, readThreads: 1, threadCount: 2, blockingThreadLimit: 1,
                                    beforeShutdown: { gate.signal() }) { port, _ in
                let setup = try HTTPClientConnection(port: port)
                let names = (0..<8).map { "c\($0)" }
                for name in names {
                    #expect(try setup.post("/v1/conversations", #"{"id":"\#(name)"}"#).status == 201)
                    for number in 1...3 {
                        let posted = try setup.post("/v1/conversations/\(name)/messages",
                                                    #"{"sender":"ana","body":"\#(name) says \#(number)"}"#)
                        #expect(posted.status == 201)
                    }
                }
                // `before` pages: a newest page could be answered from one kept.
                let first = try HTTPClientConnection(port: port)
                try first.send(HTTPRequest(method: .get, target: "/v1/conversations/c0/messages?before=1000000"))
                #expect(eventually { statements.withLock { $0.count } == 1 })
                var waiting: [(String, HTTPClientConnection)] = []
                for name in names.dropFirst() {
                    let connection = try HTTPClientConnection(port: port)
                    try connection.send(HTTPRequest(method: .get, target: "/v1/conversations/\(name)/messages?before=1000000"))
                    waiting.append((name, connection))
                }
                #expect(eventually { store.pageStatementCounts.waiting == names.count - 1 })

                // A read that is not a page goes to the read pool's one thread,
                // which the queued pages left free.
                let members = try HTTPClientConnection(port: port).get("/v1/conversations/c3/members")
                #expect(members.status == 200)
                #expect(store.pageStatementCounts.waiting == names.count - 1)

                gate.signal()
                let answer = try first.receive()
                #expect(answer.status == 200)
                #expect(answer.bodyText.contains("c0 says 3"))
                for (name, connection) in waiting {
                    let page = try connection.receive()
                    #expect(page.status == 200)
                    #expect(page.bodyText.contains("\(name) says 1") && page.bodyText.contains("\(name) says 3"))
                    #expect(!page.bodyText.contains("c0 says"))
                }
                // The seven queued pages went together, in one statement after the held one.
                #expect(statements.withLock { $0 } == [1, names.count - 1])
            }
        }
    }
}
