@testable import HistoryPostgres
import HistoryStore
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// The writer's seqs of conversations (`KnownConversationSeqs`): learned
    /// from the rows a batch locked, they let the next batch's `client_id`
    /// lookup name conversations by seq (`clientIDsBySeqSQL`); a batch with
    /// any conversation the writer has not locked yet looks up by public id.
    /// Either way a repeated `client_id` is answered with the original.
    @Suite("Known conversation seqs")
    struct KnownConversationSeqsTests {
        @Test func aLockedConversationsSeqNamesItInTheNextBatchsClientIDLookup() async throws {
            try await withTestDatabase { uri in
                try WriterInstance.migrate(uri)
                let connection = try PGConnection(uri: uri)
                defer { connection.close() }
                // Made by a batch of another writer's: this one knows neither.
                let made = PostgresBatch(connection: connection).perform(["a", "b"].map { id in
                    .createConversation(id: ConversationID(id)!, title: nil, owner: nil) { _ in }
                })
                #expect(made.commit != nil)
                let seqOfA = try connection.query("SELECT seq FROM conversations WHERE id = 'a'").int64(0, 0)
                let known = KnownConversationSeqs()

                func append(_ clientID: String, to conversation: String) -> (WriteRequest, Locked<Result<AppendOutcome, StoreError>?>) {
                    let answer = Locked<Result<AppendOutcome, StoreError>?>(nil)
                    let request = WriteRequest.append(NewMessage(sender: "ana", body: "hello", clientID: clientID),
                                                      conversation: ConversationID(conversation)!) { result in
                        answer.withLock { $0 = result }
                    }
                    return (request, answer)
                }
                func outcome(_ answer: Locked<Result<AppendOutcome, StoreError>?>) throws -> AppendOutcome? {
                    try answer.withLock { $0 }?.get()
                }
                func perform(_ requests: [WriteRequest]) {
                    let outcome = PostgresBatch(connection: connection, knownSeqs: known).perform(requests)
                    for answer in outcome.answers { answer() }
                }
                let batch = PostgresBatch(connection: connection, knownSeqs: known)

                // Nothing locked yet: by public id.
                let (first, firstAnswer) = append("k1", to: "a")
                #expect(batch.clientIDPrefetch(of: [first])?.sql == PostgresBatch.clientIDsByIDSQL)
                perform([first])
                let original = try #require(try outcome(firstAnswer))
                guard case .created(let stored) = original else { Issue.record("the first append was not created"); return }
                #expect(known.seq(of: "a") == seqOfA, "learned from the locked row")
                #expect(known.seq(of: "b") == nil, "b was not in the batch")

                // "a" is known: by seq, and the repeat answers the original.
                let (again, againAnswer) = append("k1", to: "a")
                let bySeq = try #require(batch.clientIDPrefetch(of: [again]))
                #expect(bySeq.sql == PostgresBatch.clientIDsBySeqSQL)
                perform([again])
                #expect(try outcome(againAnswer) == .existing(stored))

                // One unknown conversation in the batch: by public id for all.
                let (other, otherAnswer) = append("k2", to: "b")
                let (repeated, repeatedAnswer) = append("k1", to: "a")
                #expect(batch.clientIDPrefetch(of: [other, repeated])?.sql == PostgresBatch.clientIDsByIDSQL)
                perform([other, repeated])
                #expect(try outcome(repeatedAnswer) == .existing(stored))
                guard case .created? = try outcome(otherAnswer) else {
                    Issue.record("b's append was not created"); return
                }
                #expect(known.seq(of: "b") != nil)
            }
        }
    }
}
