import ArgumentParser
import HTTPCore
import HistoryAPI
import HistoryStore
import HistorySQLite
import HistoryWiring

/// How each kind of setting is read from text: one function per kind, used
/// for a flag (as its `transform:`) and for its environment variable alike,
/// so both accept the same text and refuse it in the same words.
enum SettingValue {
    static func nonEmpty(_ text: String) throws(InvalidSetting) -> String {
        guard !text.isEmpty else { throw InvalidSetting("must not be empty") }
        return text
    }

    static func port(_ text: String) throws(InvalidSetting) -> Int {
        guard let port = decimal(text), (0...65_535).contains(port) else {
            throw InvalidSetting("must be an integer from 0 to 65535")
        }
        return port
    }

    static func positiveCount(_ text: String) throws(InvalidSetting) -> Int {
        guard let count = decimal(text), count >= 1 else { throw InvalidSetting("must be a positive integer") }
        return count
    }

    /// A store's read connections: at least one, and not so many that a
    /// typo opens thousands of sessions.
    static func readConnections(_ text: String) throws(InvalidSetting) -> Int {
        let range = ServerConfiguration.readConnectionsRange
        guard let count = decimal(text), range.contains(count) else {
            throw InvalidSetting("must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return count
    }

    /// The feeds' reset threshold: at least one change, at most a million.
    static func resetAfter(_ text: String) throws(InvalidSetting) -> Int {
        let range = FeedSettings.resetAfterRange
        guard let count = decimal(text), range.contains(count) else {
            throw InvalidSetting("must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return count
    }

    /// The newest pages' cache in MiB, as bytes: 0 (none) to 64 GiB.
    static func newestPageCacheBytes(_ text: String) throws(InvalidSetting) -> Int {
        let range = ServerConfiguration.newestPageCacheMiBRange
        guard let mebibytes = decimal(text), range.contains(mebibytes) else {
            throw InvalidSetting("must be a whole number of MiB from \(range.lowerBound) to \(range.upperBound)")
        }
        return mebibytes << 20
    }

    /// A count where 0 means "off" (a rate limit).
    static func count(_ text: String) throws(InvalidSetting) -> Int {
        guard let count = decimal(text) else { throw InvalidSetting("must be an integer, 0 or more") }
        return count
    }

    /// Whole seconds from 1 to a day: a timeout of 0 would close every
    /// connection with output, and past a day it protects nothing.
    static func seconds(_ text: String) throws(InvalidSetting) -> Duration {
        guard let seconds = decimal(text), (1...86_400).contains(seconds) else {
            throw InvalidSetting("must be a whole number of seconds from 1 to 86400")
        }
        return .seconds(seconds)
    }

    /// A response budget: at least 4 KiB, room for a page's frame and more
    /// than one small message, so no setting makes every page one message.
    static func responseBytes(_ text: String) throws(InvalidSetting) -> Int {
        guard let bytes = decimal(text), bytes >= 4096 else {
            throw InvalidSetting("must be an integer of at least 4096 (bytes)")
        }
        return bytes
    }

    static func durability(_ text: String) throws(InvalidSetting) -> SQLiteDurability {
        guard let durability = SQLiteDurability(rawValue: text.lowercased()) else {
            throw InvalidSetting("must be full or normal")
        }
        return durability
    }

    static func logLevel(_ text: String) throws(InvalidSetting) -> LogLevel {
        guard let level = LogLevel(name: text) else { throw InvalidSetting("must be debug, info, warning or error") }
        return level
    }

    static func onOff(_ text: String) throws(InvalidSetting) -> Bool {
        switch text.lowercased() {
        case "on", "true", "1", "yes": true
        case "off", "false", "0", "no": false
        default: throw InvalidSetting("must be on or off")
        }
    }

    static func publicKeyFile(_ text: String) throws(InvalidSetting) -> ServerConfiguration.PublicKeyFile {
        guard let key = ServerConfiguration.PublicKeyFile(argument: text) else { throw InvalidSetting("must be KID=PATH") }
        return key
    }

    /// A name or an IP literal as `Host` carries it, without port.
    static func hostName(_ text: String) throws(InvalidSetting) -> String {
        guard !text.isEmpty, !text.contains(where: { $0 == " " || $0 == "/" || $0 == "," }) else {
            throw InvalidSetting("must be a host name such as chat.internal")
        }
        return text
    }

    /// `scheme://host[:port]`, as a browser sends it in `Origin`.
    /// `--trusted-proxy`: an address or a CIDR block, IPv4 or IPv6.
    static func network(_ text: String) throws(InvalidSetting) -> IPNetwork {
        guard let network = IPNetwork(String(text.filter { $0 != " " && $0 != "\t" })) else {
            throw InvalidSetting("must be an address or a CIDR block such as 10.0.0.0/8 or 2001:db8::/32")
        }
        return network
    }

    static func origin(_ text: String) throws(InvalidSetting) -> String {
        let rest = text.hasPrefix("https://") ? text.dropFirst(8) : text.hasPrefix("http://") ? text.dropFirst(7) : nil
        guard let rest, !rest.isEmpty, !rest.contains("/"), !rest.contains(" "), !rest.contains(",") else {
            throw InvalidSetting("must be an origin such as https://app.example (no path, no trailing slash)")
        }
        return text
    }

    /// How `--help` shows an on/off default.
    static func onOffName(_ value: Bool) -> String { value ? "on" : "off" }

    /// Digits only: `Int("+80")` would accept a sign, and a port of "+80" is a typo.
    private static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text)
    }
}

/// Why a setting's text was refused, phrased to follow its name:
/// "must be on or off". argument-parser prints it after the flag.
struct InvalidSetting: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The environment variables, read only for the flags not given.
struct SettingEnvironment {
    private let variables: [String: String]

    init(_ variables: [String: String]) { self.variables = variables }

    /// A repeatable flag's values when given, else `variable`'s
    /// comma-separated values read with `parse`, else none.
    func overrideList<Value>(_ flags: [Value], _ variable: String,
                             _ parse: (String) throws(InvalidSetting) -> Value) throws(ConfigurationError) -> [Value] {
        guard flags.isEmpty, let text = variables[variable] else { return flags }
        var values: [Value] = []
        for piece in text.split(separator: ",") {
            do {
                values.append(try parse(String(piece)))
            } catch {
                throw ConfigurationError("The value '\(piece)' is invalid for \(variable): \(error)")
            }
        }
        return values
    }

    /// `flag` when given, else `variable` read with `parse`, else nil.
    func override<Value>(_ flag: Value?, _ variable: String,
                         _ parse: (String) throws(InvalidSetting) -> Value) throws(ConfigurationError) -> Value? {
        if let flag { return flag }
        guard let text = variables[variable] else { return nil }
        do {
            return try parse(text)
        } catch {
            throw ConfigurationError("The value '\(text)' is invalid for \(variable): \(error)")
        }
    }
}

extension ArgumentHelp {
    /// A setting's help, ending with the variable it is also read from and
    /// its default, as argument-parser itself prints `(default: ...)`.
    static func setting(_ abstract: String, variable: String, default value: String,
                        valueName: String? = nil) -> ArgumentHelp {
        ArgumentHelp("\(abstract) (env: \(variable), default: \(value))", valueName: valueName)
    }
}
