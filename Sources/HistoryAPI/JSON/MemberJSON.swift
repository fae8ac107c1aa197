import HistoryStore

/// The members' shapes: `{"user_id","role","joined_at"}`, a page of them,
/// and the answer of a removal.
extension JSONWriter {
    /// A user id is at most 64 bytes of `[A-Za-z0-9_.@-]` (no escapes), a
    /// role at most 6: keys, punctuation and both fit in 160 bytes, the
    /// quoted time in 40.
    static let memberBound = 200

    public static func member(_ member: Member) -> [UInt8] {
        var buffer = JSONBuffer(capacity: memberBound)
        buffer.write(atMost: memberBound) { writeMember(member, to: &$0) }
        return buffer.finish()
    }

    /// `{"members":[...],"has_more":bool}` in the store's `user_id` order.
    public static func memberPage(_ page: MemberPage) -> [UInt8] {
        var buffer = JSONBuffer(capacity: 48 + page.members.count * (memberBound + 1))
        buffer.write(atMost: 16) { $0.write(#"{"members":["#) }
        for (index, member) in page.members.enumerated() {
            buffer.write(atMost: memberBound + 1) { cursor in
                if index > 0 { cursor.write(UInt8(ascii: ",")) }
                writeMember(member, to: &cursor)
            }
        }
        buffer.write(atMost: 32) { cursor in
            cursor.write(#"],"has_more":"#)
            cursor.writeBool(page.hasMore)
            cursor.write(UInt8(ascii: "}"))
        }
        return buffer.finish()
    }

    /// `{"removed":true|false}`.
    public static func removed(_ removed: Bool) -> [UInt8] {
        Array((removed ? #"{"removed":true}"# : #"{"removed":false}"#).utf8)
    }

    static func writeMember(_ member: Member, to cursor: inout ByteCursor) {
        cursor.write(#"{"user_id":"#)
        cursor.writeString(member.userID.rawValue)
        cursor.write(#","role":"#)
        switch member.role {
        case .member: cursor.write(#""member""#)
        case .owner: cursor.write(#""owner""#)
        }
        cursor.write(#","joined_at":"#)
        cursor.writeQuotedTimestamp(member.joinedAt)
        cursor.write(UInt8(ascii: "}"))
    }
}
