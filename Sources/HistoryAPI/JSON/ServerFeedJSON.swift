import HistoryStore

/// The backend feed's shape (`GET /v1/events`): `{"events": [{"activity",
/// "type", "conversation_id", "message" | "member"}], "has_more",
/// "activity"}`, within the response budget like every feed.
extension JSONWriter {
    /// Keys, punctuation, the type, the activity and the conversation id.
    static let serverEventFixedBound = 160 + 64 + ByteCursor.integerBound

    static func serverEventBound(_ event: ServerChangeEvent) -> Int {
        switch event.subject {
        case .message(let message): serverEventFixedBound + messageBound(message)
        case .member, .removedMember: serverEventFixedBound + memberBound
        }
    }

    /// When the events would pass `budget`, the later ones are left for the
    /// next call: `has_more` is true and `activity` the last written
    /// event's, the `since` that continues exactly there. At least one
    /// event is always written.
    public static func serverFeed(_ feed: ServerChangeFeed, budget: Int = .max) -> [UInt8] {
        eventFeed(feed.events, hasMore: feed.hasMore, counterKey: #","activity":"#, counter: feed.activity,
                  budget: budget, counterOf: \.activity, bound: serverEventBound, write: writeServerEvent)
    }

    /// One event alone: a stream's `data:`.
    public static func serverEvent(_ event: ServerChangeEvent) -> [UInt8] {
        var buffer = JSONBuffer(capacity: serverEventBound(event))
        buffer.write(atMost: serverEventBound(event)) { writeServerEvent(event, to: &$0) }
        return buffer.finish()
    }

    /// One event, the object a stream's `data:` line carries too.
    static func writeServerEvent(_ event: ServerChangeEvent, to cursor: inout ByteCursor) {
        cursor.write(#"{"activity":"#)
        cursor.writeInteger(event.activity)
        cursor.write(#","type":"#)
        switch event.kind {
        case .created: cursor.write(#""created""#)
        case .edited: cursor.write(#""edited""#)
        case .deleted: cursor.write(#""deleted""#)
        case .memberAdded: cursor.write(#""member_added""#)
        case .memberChanged: cursor.write(#""member_changed""#)
        case .memberRemoved: cursor.write(#""member_removed""#)
        }
        cursor.write(#","conversation_id":"#)
        cursor.writeString(event.conversationID.rawValue)
        switch event.subject {
        case .message(let message):
            cursor.write(#","message":"#)
            writeMessage(message, to: &cursor)
        case .member(let member):
            cursor.write(#","member":"#)
            writeMember(member, to: &cursor)
        case .removedMember(let user):
            cursor.write(#","member":{"user_id":"#)
            cursor.writeString(user.rawValue)
            cursor.write(UInt8(ascii: "}"))
        }
        cursor.write(UInt8(ascii: "}"))
    }
}
