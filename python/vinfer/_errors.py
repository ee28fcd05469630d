"""vinfer's exceptions: one base class, one subclass per kind of failure."""


class Error(Exception):
    """Base of every error vinfer raises for a cause the caller can see (a bad
    file, an unsupported model, a limit exceeded); the message is one line
    naming the input, as the command-line tool prints it."""


class InvalidArgumentError(Error, ValueError):
    """An argument is out of range or inconsistent (also a ValueError)."""


class BadInputError(Error):
    """A file's content is corrupt, truncated or not what it claims."""


class UnsupportedError(Error):
    """Valid input that vinfer does not handle (a format, an operator)."""


class LimitExceededError(Error):
    """The input exceeds a safety limit (pixels, model size)."""


class FileError(Error, OSError):
    """The file system refused: a missing file, no permission (also an OSError)."""


class InternalError(Error):
    """A bug in vinfer."""
