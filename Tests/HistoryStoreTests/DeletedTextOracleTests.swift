import HistoryTestSupport
import Foundation
import Testing
@testable import HistoryStore
@testable import HistorySQLite

/// Deleting a message erases everything derived from its text, the
/// `client_id` fingerprint included: a retry of a deleted message's
/// `client_id` is answered with the tombstone whatever body it carries, so
/// retries cannot confirm a guess of the deleted text.
@Suite("Deleted text oracle", .postgresCluster)
struct DeletedTextOracleTests {
    @Test(arguments: StoreBackend.allCases) func aRetryBeforeTheDeleteStillTellsTheBodyApart(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let original = NewMessage(sender: "ana", body: "the secret is 42", clientID: "k1")
            let posted = try await store.append(original, to: cid("c")).message
            let retried = try await store.append(original, to: cid("c"))
            #expect(retried == .existing(posted))
            let guess = NewMessage(sender: "ana", body: "the secret is 41", clientID: "k1")
            await #expect(throws: StoreError.clientIDConflict(clientID: "k1")) {
                try await store.append(guess, to: cid("c"))
            }
        }
    }

    @Test func afterTheDeleteEveryRetryGetsTheTombstone() async throws {
        try await withTemporaryStore { store in
            try await store.make("c")
            let original = NewMessage(sender: "ana", body: "the secret is 42", clientID: "k1")
            let posted = try await store.append(original, to: cid("c")).message
            let tombstone = try await store.delete(messageID: posted.id, in: cid("c"))
            #expect(tombstone.deleted && tombstone.body.isEmpty)
            let versionAfterDelete = try store.conversation(cid("c")).version

            let retries = [
                original,
                NewMessage(sender: "ana", body: "the secret is 41", clientID: "k1"),
                NewMessage(sender: "bob", body: "the secret is 42", clientID: "k1"),
                NewMessage(sender: "bob", body: "x", clientID: "k1"),
            ]
            for retry in retries {
                let outcome = try await store.append(retry, to: cid("c"))
                #expect(outcome == .existing(tombstone), "\(retry)")
            }
            // Nothing was posted again, nothing changed.
            #expect(try store.conversation(cid("c")).version == versionAfterDelete)
            #expect(try store.page(of: cid("c"), PageQuery()).messages == [tombstone])
            // The fingerprint is gone from the row, not only ignored.
            #expect(try queryStrings(store.configuration.path, "SELECT client_fingerprint FROM messages") == ["NULL"])
        }
    }

    /// An edited message keeps answering retries of its original post.
    @Test(arguments: StoreBackend.allCases) func anEditKeepsTheRetryRule(backend: StoreBackend) async throws {
        try await withTestStore(backend) { store in
            try await store.make("c")
            let original = NewMessage(sender: "ana", body: "first", clientID: "k1")
            let posted = try await store.append(original, to: cid("c")).message
            let edited = try await store.edit(messageID: posted.id, in: cid("c"), body: "second")
            #expect(try await store.append(original, to: cid("c")) == .existing(edited))
            await #expect(throws: StoreError.clientIDConflict(clientID: "k1")) {
                try await store.append(NewMessage(sender: "ana", body: "second", clientID: "k1"), to: cid("c"))
            }
        }
    }

    /// Tombstones written before the store cleared fingerprints lose theirs
    /// when the file is migrated; live messages keep theirs.
    @Test func migratingForgetsTheFingerprintsOfOlderTombstones() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let migrations = try Migration.bundled()
            let forgetting = try #require(migrations.firstIndex { $0.name == "tombstones_forget_fingerprints" })
            let connection = try SQLiteConnection(path: path)
            _ = try SQLiteMigrator(migrations: Array(migrations[..<forgetting])).migrate(connection)
            // As an older build left them: a tombstone with its fingerprint.
            try connection.execute(sql: """
                INSERT INTO conversations (seq, id, created_at, message_count, oldest_id, newest_id, version)
                    VALUES (1, 'c', 0, 2, 1, 2, 3);
                INSERT INTO messages (place, sender, body, created_at, deleted, client_id, client_fingerprint,
                                      created_version, version)
                    VALUES ((1 << 36) | 1, 'ana', '', 0, 1, 'gone', 1234, 1, 3),
                           ((1 << 36) | 2, 'ana', 'kept', 0, 0, 'live', 5678, 2, 2);
                """)
            connection.close()

            let store = try SQLiteHistoryStore(configuration: SQLiteStoreConfiguration(path: path, durability: .normal))
            defer { store.close() }
            #expect(try queryStrings(path, "SELECT client_id || '=' || coalesce(client_fingerprint, 'NULL') FROM messages ORDER BY id")
                == ["gone=NULL", "live=5678"])
            let retry = try await store.append(NewMessage(sender: "x", body: "guess", clientID: "gone"), to: cid("c"))
            #expect(retry.message.id == 1 && retry.message.deleted)
        }
    }
}
