import HistoryStore

/// What one committed transaction changed, as `NOTIFY` payloads on the
/// channel `ChangeNotice.channel`: how an instance's parked long-polls
/// learn of a commit made through another instance.
///
/// The writer sends its notices with `pg_notify` inside the transaction, so
/// PostgreSQL delivers them exactly when the transaction commits and never
/// when it rolls back. Every instance's listener (the writer's own included)
/// decodes them and wakes its local waits.
///
/// The payload is text (a notification carries at most 8,000 bytes), one
/// line per notice, fields separated by one space:
///
/// - `c VERSION CONVERSATION_ID [RANGES]`: the conversation's version became
///   VERSION; RANGES (`3-7,9-9`) are the message ids the commit changed. No
///   RANGES means the ids are unknown, which wakes every wait on the
///   conversation, range-filtered ones too.
/// - `i ACTIVITY [s=SEQ,SEQ,...] [u=USER,USER,...]`: the server-wide
///   activity counter reached ACTIVITY, changing these conversations (by
///   `seq`) and these users' markers or memberships.
/// - `t 1|0 CONVERSATION_ID USER_ID ORIGIN`: a typing call that instance
///   ORIGIN accepted (1: typing, 0: stopped). Sent outside any transaction
///   (typing is never stored); ORIGIN lets an instance skip its own.
///
/// Conversation ids and user ids cannot hold a space, a comma or `=`, so the
/// fields need no escaping. A notice too long for one payload is split
/// (`payloads(maximumBytes:)`); a range list too long for one is dropped,
/// which only wakes more waits than needed.
public enum ChangeNotice: Hashable, Sendable {
    case conversation(ConversationID, version: Int64, changedIDs: [ClosedRange<Int64>]?)
    case inbox(activity: Int64, conversations: [Int64], users: [String])
    case typing(TypingChange, origin: String)

    /// The channel every instance listens on.
    public static let channel = "history_changes"

    /// Sends a payload (`$2`) on the channel (`$1`); PostgreSQL delivers
    /// it at COMMIT, never after a rollback. Every writer sends its notices
    /// with this one statement.
    static let notifySQL = "SELECT pg_notify($1, $2)"

    /// PostgreSQL refuses payloads of 8,000 bytes or more.
    public static let maximumPayloadBytes = 7_900

    /// The notices as lines packed into as few payloads as fit.
    public static func payloads(_ notices: [ChangeNotice], maximumBytes: Int = maximumPayloadBytes) -> [String] {
        var payloads: [String] = []
        var current = ""
        for notice in notices {
            for line in notice.lines(maximumBytes: maximumBytes) {
                if !current.isEmpty && current.utf8.count + 1 + line.utf8.count > maximumBytes {
                    payloads.append(current)
                    current = ""
                }
                current += current.isEmpty ? line : "\n" + line
            }
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// Every notice in a payload; lines it cannot read are skipped (a
    /// newer instance's notice kind, say) and reported in `unreadable`.
    public static func decode(_ payload: String) -> (notices: [ChangeNotice], unreadable: Int) {
        var notices: [ChangeNotice] = []
        var unreadable = 0
        for line in payload.split(separator: "\n", omittingEmptySubsequences: true) {
            if let notice = decodeLine(line) { notices.append(notice) } else { unreadable += 1 }
        }
        return (notices, unreadable)
    }

    // MARK: - Lines

    /// One line, or several for an inbox notice with long lists; a range
    /// list that does not fit is left out.
    func lines(maximumBytes: Int) -> [String] {
        switch self {
        case .conversation(let id, let version, let changed):
            let head = "c \(version) \(id.rawValue)"
            guard let changed, !changed.isEmpty else { return [head] }
            let ranges = changed.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
            let line = head + " " + ranges
            return line.utf8.count <= maximumBytes ? [line] : [head]
        case .inbox(let activity, let conversations, let users):
            let head = "i \(activity)"
            let seqs = conversations.map(String.init)
            let whole = head + Self.field("s", seqs) + Self.field("u", users)
            guard whole.utf8.count > maximumBytes else { return [whole] }
            // Too long for one line: each list in lines of its own, every
            // line with the same activity.
            return Self.chunks("s", seqs, head: head, maximumBytes: maximumBytes)
                + Self.chunks("u", users, head: head, maximumBytes: maximumBytes)
        case .typing(let change, let origin):
            return ["t \(change.typing ? 1 : 0) \(change.conversation.rawValue) \(change.user.rawValue) \(origin)"]
        }
    }

    /// ` s=1,2,3`, or nothing for an empty list.
    private static func field(_ name: String, _ items: [String]) -> String {
        items.isEmpty ? "" : " \(name)=" + items.joined(separator: ",")
    }

    /// `head name=a,b,...` lines of at most `maximumBytes` each.
    private static func chunks(_ name: String, _ items: [String], head: String, maximumBytes: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for item in items {
            if line.isEmpty {
                line = head + " \(name)=" + item
            } else if line.utf8.count + 1 + item.utf8.count > maximumBytes {
                lines.append(line)
                line = head + " \(name)=" + item
            } else {
                line += "," + item
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    private static func decodeLine(_ line: Substring) -> ChangeNotice? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 2, let number = Int64(fields[1]) else { return nil }
        switch fields[0] {
        case "c":
            guard fields.count == 3 || fields.count == 4, let id = ConversationID(String(fields[2])) else { return nil }
            guard fields.count == 4 else { return .conversation(id, version: number, changedIDs: nil) }
            var ranges: [ClosedRange<Int64>] = []
            for piece in fields[3].split(separator: ",") {
                let bounds = piece.split(separator: "-", maxSplits: 1)
                guard bounds.count == 2, let low = Int64(bounds[0]), let high = Int64(bounds[1]), low <= high else {
                    return nil
                }
                ranges.append(low...high)
            }
            return .conversation(id, version: number, changedIDs: ranges)
        case "i":
            var conversations: [Int64] = []
            var users: [String] = []
            for field in fields.dropFirst(2) {
                if field.hasPrefix("s=") {
                    for seq in field.dropFirst(2).split(separator: ",") {
                        guard let value = Int64(seq) else { return nil }
                        conversations.append(value)
                    }
                } else if field.hasPrefix("u=") {
                    users.append(contentsOf: field.dropFirst(2).split(separator: ",").map(String.init))
                } else {
                    return nil
                }
            }
            return .inbox(activity: number, conversations: conversations, users: users)
        case "t":
            guard fields.count == 5, number == 0 || number == 1, let conversation = ConversationID(String(fields[2])),
                  let user = UserID(fields[3]), !fields[4].isEmpty else { return nil }
            return .typing(TypingChange(conversation: conversation, user: user, typing: number == 1),
                           origin: String(fields[4]))
        default:
            return nil
        }
    }
}
