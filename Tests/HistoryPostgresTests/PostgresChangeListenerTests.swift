import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Synchronization
import Testing

extension PostgresTests {
    @Suite("PostgresChangeListener")
    struct PostgresChangeListenerTests {
        /// What a listener heard, for the test to look at.
        final class Heard: Sendable {
            let notices = Mutex<[ChangeNotice]>([])
            let gaps = Atomic<Int>(0)
            let losses = Atomic<Int>(0)

            func listener(_ uri: String) -> PostgresChangeListener {
                PostgresChangeListener(uri: uri,
                                       onNotices: { notices in self.notices.withLock { $0 += notices } },
                                       onGap: { self.gaps.add(1, ordering: .relaxed) },
                                       onConnectionLost: { _, _ in self.losses.add(1, ordering: .relaxed) })
            }

            var all: [ChangeNotice] { notices.withLock { $0 } }
        }

        private func notify(_ connection: PGConnection, _ notices: [ChangeNotice]) throws(PostgresError) {
            for payload in ChangeNotice.payloads(notices) {
                try connection.query("SELECT pg_notify($1, $2)", [.text(ChangeNotice.channel), .text(payload)])
            }
        }

        @Test func aNotifyFromAnotherSessionIsDecodedAndHandedOver() async throws {
            try await withTestDatabase { uri in
                let heard = Heard()
                let listener = heard.listener(uri)
                defer { listener.close() }
                try listener.start()
                #expect(listener.isListening)
                let sender = try PGConnection(uri: uri)
                let general = ConversationID("general")!
                let sent: [ChangeNotice] = [
                    .conversation(general, version: 7, changedIDs: [3...5, 9...9]),
                    .inbox(activity: 12, conversations: [1, 2], users: ["ana", "bo"]),
                ]
                try notify(sender, sent)
                // Another channel and an unreadable line are not notices.
                try sender.execute(sql: "NOTIFY other_channel, 'c 1 general'")
                try sender.query("SELECT pg_notify($1, $2)", [.text(ChangeNotice.channel), .text("z 1 what")])
                // Notices sent inside a transaction arrive at its commit, and
                // those of a rolled-back one never.
                try sender.transaction { () throws(PostgresError) in
                    try notify(sender, [.conversation(general, version: 8, changedIDs: nil)])
                }
                try sender.execute(sql: "BEGIN")
                try notify(sender, [.conversation(general, version: 99, changedIDs: nil)])
                try sender.execute(sql: "ROLLBACK")
                try notify(sender, [.conversation(general, version: 9, changedIDs: [10...10])])
                let expected = sent + [.conversation(general, version: 8, changedIDs: nil),
                                       .conversation(general, version: 9, changedIDs: [10...10])]
                #expect(await eventually { heard.all.count >= expected.count })
                #expect(heard.all == expected)
                #expect(heard.gaps.load(ordering: .relaxed) == 0)
            }
        }

        /// Three times over: libpq closes a lost connection's socket at
        /// once, so the next one may get the same descriptor number while
        /// Dispatch still unregisters the old one; the listener must hear on
        /// every new connection all the same.
        @Test func aTerminatedListenerReconnectsReportsTheGapAndHearsAgain() async throws {
            try await withTestDatabase { uri in
                let heard = Heard()
                let listener = heard.listener(uri)
                defer { listener.close() }
                try listener.start()
                let admin = try PGConnection(uri: uri)
                var expected: [ChangeNotice] = []
                for round in 1...3 {
                    let before = listener.backendPID
                    #expect(before > 0)
                    #expect(try admin.query("SELECT pg_terminate_backend($1)", [.int32(before)]).bool(0, 0))
                    // The gap is reported once LISTEN runs on a new session.
                    #expect(await eventually { heard.gaps.load(ordering: .relaxed) == round && listener.isListening })
                    #expect(heard.losses.load(ordering: .relaxed) >= round)
                    #expect(listener.backendPID != before)
                    #expect(listener.connections == round + 1)
                    let listening = try admin.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'history-server listener' AND datname = current_database()")
                    #expect(listening.int64(0, 0) == 1)
                    let notice = ChangeNotice.conversation(ConversationID("after")!, version: Int64(round), changedIDs: nil)
                    try notify(admin, [notice])
                    expected.append(notice)
                    #expect(await eventually { heard.all == expected })
                }
            }
        }

        @Test func aStoppedServerIsRetriedWithBackoffUntilItIsBack() async throws {
            // A cluster of its own: stopping the suite's would fail its other tests.
            try await withPostgresCluster { cluster in
                let database = try cluster.createDatabase()
                let heard = Heard()
                let listener = heard.listener(database)
                defer { listener.close() }
                try listener.start()
                try cluster.stop()
                #expect(await eventually { heard.losses.load(ordering: .relaxed) >= 3 })
                #expect(!listener.isListening)
                #expect(heard.gaps.load(ordering: .relaxed) == 0)
                try cluster.start()
                #expect(await eventually { listener.isListening })
                #expect(heard.gaps.load(ordering: .relaxed) == 1)
                let sender = try PGConnection(uri: database)
                let notice = ChangeNotice.inbox(activity: 5, conversations: [], users: ["ana"])
                try notify(sender, [notice])
                #expect(await eventually { heard.all == [notice] })
            }
        }

        @Test func backoffDoublesUpToItsBound() {
            #expect(PostgresChangeListener.retryDelayMilliseconds(attempt: 0) == 50)
            #expect(PostgresChangeListener.retryDelayMilliseconds(attempt: 1) == 100)
            #expect(PostgresChangeListener.retryDelayMilliseconds(attempt: 5) == 1_600)
            #expect(PostgresChangeListener.retryDelayMilliseconds(attempt: 6) == 2_000)
            #expect(PostgresChangeListener.retryDelayMilliseconds(attempt: 1_000) == 2_000)
        }
    }
}
