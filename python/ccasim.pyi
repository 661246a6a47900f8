"""Type stubs of the ccasim extension module (python/ccasim.c)."""
from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str

Source = Union[str, bytes, bytearray, memoryview, "PathLike[str]", Dict[str, Any], List[Any]]
Size = Union[int, str]

class Error(ValueError): ...

class TraceError(Error):
    file: str
    offset: Optional[int]

class ConfigError(Error):
    key: Optional[str]

class Column:
    """An int64 column (buffer protocol, format 'q'); numpy.asarray() takes it without a copy."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> int: ...

class Replay:
    report: Dict[str, Any]
    @property
    def memory_stats(self) -> Dict[str, int]: ...
    @property
    def oom(self) -> Optional[Dict[str, Any]]: ...
    @property
    def events(self) -> int: ...
    @property
    def whatif(self) -> bool: ...
    @property
    def fragmentation(self) -> Dict[str, Any]: ...
    @property
    def check(self) -> Optional[Dict[str, Any]]: ...
    @property
    def peak_reserved(self) -> int: ...
    @property
    def peak_allocated(self) -> int: ...
    @property
    def num_ooms(self) -> int: ...
    @property
    def num_device_alloc(self) -> int: ...
    @property
    def timeline(self) -> Optional[Dict[str, Any]]: ...

class Trace:
    @property
    def source(self) -> str: ...
    @property
    def devices(self) -> int: ...
    @property
    def events(self) -> List[int]: ...
    @property
    def pytorch_version(self) -> str: ...
    def replay(self, config: Optional[str] = None, memory_fraction: Optional[float] = None,
               device_memory: Optional[Size] = None, device: int = 0, check: bool = False,
               pytorch_version: Optional[str] = None, whatif: bool = False,
               keep_going: bool = False, timeline: Optional[int] = None,
               recorded_memory_fraction: Optional[float] = None,
               bounds: bool = True, jobs: int = 0) -> Replay: ...
    def sweep(self, configs: Union[str, Sequence[str], None] = None,
              sets: Union[str, Sequence[str], None] = None, default_grid: Optional[bool] = None,
              goal: Optional[str] = None, recommend: bool = False,
              memory_fraction: Optional[float] = None, device_memory: Optional[Size] = None,
              device: int = 0, pytorch_version: Optional[str] = None, jobs: int = 0,
              address_sensitivity: bool = True, all_address_models: bool = False,
              calibration: Optional[str] = None, gpu: Optional[str] = None,
              context: Optional[Size] = None, full: bool = False,
              recorded_memory_fraction: Optional[float] = None) -> Any: ...
    def fit(self, configs: Union[str, Sequence[str], None] = None,
            sets: Union[str, Sequence[str], None] = None, default_grid: Optional[bool] = None,
            recorded: bool = False, gpu: Union[str, Sequence[str], None] = None,
            context: Optional[Size] = None, device: int = 0,
            pytorch_version: Optional[str] = None, jobs: int = 0,
            memory_fraction: Optional[float] = None, full: bool = False,
            recorded_memory_fraction: Optional[float] = None, *,
            gpus: Union[str, Sequence[str], None] = None) -> Any: ...
    def explain(self, config: Optional[str] = None, memory_fraction: Optional[float] = None,
                device_memory: Optional[Size] = None, device: int = 0,
                pytorch_version: Optional[str] = None, limit: int = 20, top: int = 8,
                recorded_memory_fraction: Optional[float] = None) -> str: ...
    def peak(self, config: Optional[str] = None, memory_fraction: Optional[float] = None,
             device_memory: Optional[Size] = None, device: int = 0, under: Optional[str] = None,
             pytorch_version: Optional[str] = None,
             recorded_memory_fraction: Optional[float] = None) -> Dict[str, Any]: ...

def load(source: Source, name: Optional[str] = None) -> Trace: ...

# ccasim.fleet, a submodule made in C (`import ccasim.fleet` works; ccasim is
# one file, not a package, so its stub is this namespace).
Job = Tuple[str, Optional[str], int, float]  # (path, gpu, cap bytes, fraction)

class fleet:
    @staticmethod
    def jobs(inputs: Union[str, "PathLike[str]", Sequence[Union[str, "PathLike[str]"]]]) -> List[Job]: ...
    @staticmethod
    def run(jobs: Union[str, "PathLike[str]", Sequence[Union[Job, str, "PathLike[str]"]]], *,
            configs: Union[str, Sequence[str], None] = (), sets: Union[str, Sequence[str], None] = (),
            default_grid: Optional[bool] = None, gpu: Optional[str] = None,
            memory_fraction: Optional[float] = 0.0, device_memory: Optional[Size] = 0,
            pytorch_version: Union[str, int, None] = 0) -> List[str]: ...
    @staticmethod
    def write(dir: Union[str, "PathLike[str]"], rows: Sequence[str], name: Optional[str] = None, *,
              configs: Union[str, Sequence[str], None] = (), sets: Union[str, Sequence[str], None] = (),
              default_grid: Optional[bool] = None, gpu: Optional[str] = None,
              memory_fraction: Optional[float] = 0.0, device_memory: Optional[Size] = 0,
              pytorch_version: Union[str, int, None] = 0) -> None: ...
    @staticmethod
    def merge(dirs: Union[str, "PathLike[str]", Sequence[Union[str, "PathLike[str]"]]],
              format: str = "text", wide: bool = False, *,
              allow_missing: bool = False) -> str: ...
def gpu_presets() -> List[Dict[str, Any]]: ...
