import ArgumentParser

/// One of the attacks `abuse` runs beside the normal users, each on its own
/// after a run with no attack at all.
enum Attack: String, CaseIterable, Sendable, Codable {
    /// Sockets that send a request head one byte every few seconds and never finish it.
    case slowloris
    /// Sockets of one client that connect and never send a byte.
    case idle
    /// Clients that ask for the largest pages again and again and never read an answer.
    case nonReaders = "non-readers"
    /// Long-polls filtered by `min_id`/`max_id` to ids no new message has, while the normal posters post.
    case longPolls = "long-polls"
    /// One client posting as fast as it can while the normal posters post.
    case flood
    /// One client reading as fast as its sockets go with a forged token
    /// (a real one whose signature is altered, so each costs the server a
    /// signature check unless it refuses it first).
    case badTokens = "bad-tokens"

    /// Attacks that come back when the server closes their sockets.
    var reconnects: Bool { self == .flood || self == .badTokens }

    /// The second octet of the loopback addresses this attack's clients
    /// connect from (127.N.x.y): the normal users keep 127.0.0.1.
    var sourceOctet: Int {
        switch self {
        case .slowloris: 2
        case .idle: 3
        case .nonReaders: 4
        case .longPolls: 5
        case .flood: 6
        case .badTokens: 7
        }
    }
}

/// `--attacks slowloris,flood`: which attacks to run, in the order of ``Attack``.
struct AttackList: ExpressibleByArgument, Hashable, Sendable, CustomStringConvertible {
    var attacks: [Attack]

    static let all = AttackList(attacks: Attack.allCases)

    init(attacks: [Attack]) { self.attacks = attacks }

    init?(argument: String) {
        var chosen = Set<Attack>()
        for name in argument.split(separator: ",") {
            guard let attack = Attack(rawValue: String(name)) else { return nil }
            chosen.insert(attack)
        }
        guard !chosen.isEmpty else { return nil }
        attacks = Attack.allCases.filter(chosen.contains)
    }

    var description: String { attacks.map(\.rawValue).joined(separator: ",") }
}

/// What an attack did and what the server did to it, counted on the attack's own thread.
struct AttackOutcome: Sendable, Codable {
    /// Sockets the attack tried to open.
    var sockets = 0
    var connected = 0
    /// Connects refused, reset or still pending when the phase ended.
    var connectFailed = 0
    /// Connected sockets the server closed (end of stream, reset or a failed send).
    var closedByServer = 0
    /// Requests written whole.
    var requestsSent = 0
    /// The status of each answer the attack read (for sockets that never
    /// read, none); slowloris and idle sockets count the first answer each.
    var statuses: [Int: Int] = [:]

    var answers: Int { statuses.values.reduce(0, +) }

    /// One cell of the report's table.
    var summary: String {
        var parts: [String] = []
        if sockets > 1 {
            parts.append("\(Format.grouped(connected))/\(Format.grouped(sockets)) connected")
            if connectFailed > 0 { parts.append("\(Format.grouped(connectFailed)) refused") }
            parts.append("\(Format.grouped(closedByServer)) closed by server")
        } else if closedByServer > 0 {
            parts.append("closed by server \(Format.grouped(closedByServer))x")
        }
        if requestsSent > 0 { parts.append("\(Format.grouped(requestsSent)) requests") }
        if !statuses.isEmpty {
            parts.append("answers " + statuses.sorted { $0.key < $1.key }
                .map { "\($0.key)x\(Format.grouped($0.value))" }.joined(separator: " "))
        }
        return parts.joined(separator: ", ")
    }
}
