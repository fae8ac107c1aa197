import HistoryStore

extension JSONWriter {
    /// The shape every feed shares (a conversation's, the inbox's, the
    /// backend's): `{"events":[...],` a `"reset":true,` when asked,
    /// `"has_more"` and the feed's counter (`version` or `activity`), in at
    /// most `budget` bytes. When the events would pass it, the later ones
    /// are left for the next call: `has_more` is true and the counter is the
    /// last written event's, the `since` that continues exactly there. At
    /// least one event is always written.
    ///
    /// - Parameters:
    ///   - counterKey: the counter's key with its comma and colon, `,"version":`.
    ///   - counter: the feed's own counter, written when every event fits.
    ///   - counterOf: an event's counter.
    ///   - bound: the most bytes an event's JSON takes.
    static func eventFeed<Event>(_ events: [Event], reset: Bool = false, hasMore: Bool,
                                 counterKey: StaticString, counter: Int64, budget: Int,
                                 counterOf: (Event) -> Int64, bound: (Event) -> Int,
                                 write: (Event, inout ByteCursor) -> Void) -> [UInt8] {
        var capacity = 96
        for event in events { capacity += bound(event) + 1 }
        var buffer = JSONBuffer(capacity: min(capacity, budget))
        buffer.write(atMost: 16) { $0.write(#"{"events":["#) }
        var elements = BudgetedElements(arrayStart: buffer.byteCount, limit: budget - feedTailBound)
        var lastWritten = counter
        for event in events {
            let kept = elements.appendUnlessFull(to: &buffer, atMost: bound(event)) { write(event, &$0) }
            if !kept { break }
            lastWritten = counterOf(event)
        }
        buffer.write(atMost: feedTailBound) { cursor in
            cursor.write(#"],"#)
            if reset { cursor.write(#""reset":true,"#) }
            cursor.write(#""has_more":"#)
            cursor.writeBool(hasMore || elements.stoppedAtBack)
            cursor.write(counterKey)
            cursor.writeInteger(elements.stoppedAtBack ? lastWritten : counter)
            cursor.write(UInt8(ascii: "}"))
        }
        return buffer.finish()
    }

    /// The most a feed writes after its events.
    static let feedTailBound = 64
}
