/// Message bodies that look like chat: 20 to 300 characters of words, most
/// of them short, as JSON-ready ASCII (no escaping needed).
enum TextGenerator {
    static let words: [[UInt8]] = """
        the a to and of i you it is that in we for on this be with have are not was can just so \
        but what do if at my me no yes ok okay will me about like get from they one all there \
        think know would could should meeting today tomorrow yesterday release build server test \
        deploy review merge branch ticket bug fix issue page scroll window message history load \
        latency cache index query commit rollback sqlite swift client screen lunch coffee thanks \
        sure great maybe later soon now again please sorry nice cool really here done ready \
        checking looks good works broken weird slow fast again friday monday week month plan \
        design draft doc link call sync update note question answer idea
        """.split(separator: " ").map { Array($0.utf8) }

    static let senders: [String] = [
        "ana", "ben", "chloe", "dmitri", "eve", "farah", "gus", "hana", "ivan", "jules", "kenji", "lea",
        "mo", "nia", "omar", "pia", "quinn", "raj", "sofia", "tom", "uma", "vic", "wen", "yuki", "zoe",
    ]

    /// A body length: mostly short, sometimes long, always 20...300.
    static func length<R: RandomNumberGenerator>(using random: inout R) -> Int {
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case ..<60: return Int.random(in: 20...60, using: &random)
        case ..<90: return Int.random(in: 61...140, using: &random)
        default: return Int.random(in: 141...300, using: &random)
        }
    }

    /// Appends a body of `length` bytes to `buffer`.
    static func appendBody<R: RandomNumberGenerator>(length: Int, to buffer: inout [UInt8], using random: inout R) {
        let start = buffer.count
        var first = true
        while buffer.count - start < length {
            if !first { buffer.append(UInt8(ascii: " ")) }
            first = false
            buffer += words[Int.random(in: 0..<words.count, using: &random)]
        }
        buffer.removeLast(buffer.count - start - length)
        if buffer.last == UInt8(ascii: " ") { buffer[buffer.count - 1] = UInt8(ascii: ".") }
    }

    static func body<R: RandomNumberGenerator>(using random: inout R) -> String {
        var bytes: [UInt8] = []
        appendBody(length: length(using: &random), to: &bytes, using: &random)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func sender<R: RandomNumberGenerator>(using random: inout R) -> String {
        senders[Int.random(in: 0..<senders.count, using: &random)]
    }

    /// `{"sender":"...","body":"...","client_id":"...","reply_to":N}`; the
    /// parts are ASCII without quotes or backslashes, so nothing needs escaping.
    /// A nil sender is left out: with a user token the server takes its subject.
    static func appendJSON(sender: String?, body: String, clientID: String?, replyTo: Int64?) -> [UInt8] {
        var json: [UInt8] = []
        json.reserveCapacity(body.utf8.count + 96)
        json.append(UInt8(ascii: "{"))
        if let sender {
            json += #""sender":""#.utf8
            json += sender.utf8
            json += #"","#.utf8
        }
        json += #""body":""#.utf8
        json += body.utf8
        json.append(UInt8(ascii: "\""))
        if let clientID {
            json += #","client_id":""#.utf8
            json += clientID.utf8
            json.append(UInt8(ascii: "\""))
        }
        if let replyTo {
            json += #","reply_to":"#.utf8
            json += String(replyTo).utf8
        }
        json.append(UInt8(ascii: "}"))
        return json
    }
}
