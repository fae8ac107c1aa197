// Every test target imports this support module; the seeded generator and
// the lock it shares with the tools come with it, so a test names one module.
@_exported import ToolSupport
