import HTTPCore

/// The `Host` allow-list of a loopback bind (`BrowserSafety.hostError`):
/// 421 `misdirected_request` for a name this server is not.
final class HostGate: RequestGate {
    let browser: BrowserSafety

    init(browser: BrowserSafety) {
        self.browser = browser
    }

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        browser.hostError(passage.request).map(passage.refusal)
    }
}
