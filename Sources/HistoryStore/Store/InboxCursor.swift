import Foundation

/// A place in a user's inbox order, and the opaque cursor string that
/// carries it between pages.
///
/// The order: conversations with messages by newest message, descending
/// (message ids are unique across the server, so `newest_id` alone is a
/// total order there), then conversations without messages by id. A cursor
/// is the place of the last row a page returned; the next page starts
/// strictly after it, so a conversation that moves to the top meanwhile is
/// never repeated.
///
/// The string is base64url (no padding) of `m:<newest_id>` or
/// `e:<conversation id>`: opaque to clients, which must not build it, and
/// refused unless it is exactly what this type writes.
package enum InboxCursor: Hashable, Sendable {
    case message(newestID: Int64)
    case empty(ConversationID)

    /// The place of a conversation in the order.
    package init(_ conversation: Conversation) {
        if let newest = conversation.newestID {
            self = .message(newestID: newest)
        } else {
            self = .empty(conversation.id)
        }
    }

    /// True when `self` comes strictly before `other` in the inbox order.
    package func precedes(_ other: InboxCursor) -> Bool {
        switch (self, other) {
        case (.message(let lhs), .message(let rhs)): lhs > rhs
        case (.message, .empty): true
        case (.empty, .message): false
        case (.empty(let lhs), .empty(let rhs)): lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
        }
    }

    package var encoded: String {
        let plain = switch self {
        case .message(let newestID): "m:\(newestID)"
        case .empty(let id): "e:\(id.rawValue)"
        }
        return Data(plain.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// nil unless `text` is a cursor this type wrote.
    package init?(encoded text: String) {
        guard !text.isEmpty, text.utf8.count <= 128 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else { return nil }
        let decoded: InboxCursor
        if plain.hasPrefix("m:"), let newest = Int64(plain.dropFirst(2)), newest >= 1 {
            decoded = .message(newestID: newest)
        } else if plain.hasPrefix("e:"), let id = ConversationID(String(plain.dropFirst(2))) {
            decoded = .empty(id)
        } else {
            return nil
        }
        // One spelling per place: "m:007" or a padded variant is not ours.
        guard decoded.encoded == text else { return nil }
        self = decoded
    }
}
