import Foundation

/// Reads one open Server-Sent Events stream of a feed and turns its events
/// into the feed's answers: the change events of one network chunk become
/// one answer (a catch-up after a reconnect arrives as a few answers, not
/// one per change), an `event: reset` is an answer of its own (its data is
/// the long-poll's reset object), an `event: typing` one too; comments
/// (heartbeats) only show the connection is alive.
///
/// A class, not a value: the stream's iterator is one consumer's and
/// cannot be copied. Not `Sendable`: a feed's iterator reads it from one task.
final class FeedStreamReader<Answer: FeedAnswer> {
    private let response: HistoryStreamingResponse
    private var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator
    private var parser = EventStreamParser()
    private var pending: [Answer] = []
    /// The position after the last event read.
    private var position: Int64
    /// An event or a comment arrived: the stream works, whatever happens next.
    private(set) var deliveredAnything = false

    /// The `event:` types whose data is one of the feed's events.
    static var changeTypes: Set<String> { ["created", "edited", "deleted", "updated", "removed", "message"] }

    init(_ response: HistoryStreamingResponse, position: Int64) {
        self.response = response
        self.chunks = response.body.makeAsyncIterator()
        self.position = position
    }

    /// The next answer; nil when the server ended the stream.
    func next() async throws -> Answer? {
        while pending.isEmpty {
            let chunk: Data?
            do {
                chunk = try await chunks.next()
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if let urlError = error as? URLError, urlError.code == .cancelled { throw CancellationError() }
                throw HistoryClientError.transport(error)
            }
            guard let chunk else { return nil }
            let commentsBefore = parser.comments
            let events = parser.parse(chunk)
            if !events.isEmpty || parser.comments > commentsBefore { deliveredAnything = true }
            try collect(events)
        }
        return pending.removeFirst()
    }

    func cancel() {
        response.cancel()
    }

    private func collect(_ events: [ServerSentEvent]) throws {
        let decoder = HistoryJSON.makeDecoder()
        var changes: [Answer.Event] = []
        func flush() {
            guard !changes.isEmpty else { return }
            pending.append(Answer.streamed(changes, position: position))
            changes = []
        }
        for event in events {
            let data = Data(event.data.utf8)
            switch event.type {
            case "reset":
                flush()
                let answer: Answer
                do {
                    answer = try decoder.decode(Answer.self, from: data)
                } catch {
                    throw HistoryClientError.undecodableResponse(status: 200, reason: "reset event: \(error)")
                }
                position = Swift.max(position, answer.position)
                pending.append(answer)
            case "typing":
                flush()
                guard let body = try? decoder.decode(TypingList.self, from: data) else {
                    throw HistoryClientError.undecodableResponse(status: 200, reason: "typing event: \(event.data)")
                }
                if let answer = Answer.typing(body.typing, position: position) { pending.append(answer) }
            default:
                do {
                    let change = try decoder.decode(Answer.Event.self, from: data)
                    position = Swift.max(position, Answer.position(of: change))
                    changes.append(change)
                } catch {
                    // A type this client does not know yet is skipped; a known one must read.
                    guard Self.changeTypes.contains(event.type) else { continue }
                    throw HistoryClientError.undecodableResponse(status: 200, reason: "\(event.type) event: \(error)")
                }
            }
        }
        flush()
    }
}

/// The data of a stream's `typing` event.
struct TypingList: Decodable {
    var typing: [String]
}
