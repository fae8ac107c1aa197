import ArgumentParser
import HistoryWiring

/// What the command line asks `history-server` to do.
///
/// ```swift
/// switch try ServerLaunch(arguments: ["--port", "0"], environment: [:]) {
/// case .run(let configuration): ...
/// case .help(let text): print(text)
/// }
/// ```
enum ServerLaunch: Hashable, Sendable {
    case run(ServerConfiguration)
    /// `--help`, `-h` or `--version`, anywhere: the text to print before
    /// exiting 0.
    case help(String)

    /// Reads `arguments` (without the program name) through argument-parser,
    /// then `environment` for the flags not given.
    /// - Throws: `ConfigurationError` with argument-parser's one-line message
    ///   for a bad flag, or one naming the variable for a bad variable.
    init(arguments: [String], environment: [String: String]) throws(ConfigurationError) {
        let options: ServerOptions
        do {
            options = try ServerOptions.parse(arguments)
        } catch {
            if ServerOptions.exitCode(for: error) == .success {
                self = .help(ServerOptions.fullMessage(for: error))
                return
            }
            throw ConfigurationError(ServerOptions.message(for: error))
        }
        self = .run(try options.configuration(environment: environment))
    }
}

/// A flag or environment value the server cannot use: printed as one line,
/// exit status 2.
struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
