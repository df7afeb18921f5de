"""Enum-valued op attributes, with cudnn.pygraph's enum names.

The C++ IR holds enum attributes as their value names (checked against each
record's domain at validate()); these Python enums are what users pass, and the
binding sends the member's name. Plain strings are accepted too.
"""
import enum


class norm_forward_phase(enum.Enum):
    NOT_SET = 0
    INFERENCE = 1
    TRAINING = 2


class reduction_mode(enum.Enum):
    NOT_SET = 0
    ADD = 1
    MUL = 2
    MIN = 3
    MAX = 4
    AMAX = 5
    AVG = 6
    NORM1 = 7
    NORM2 = 8
    MUL_NO_ZEROS = 9


class reshape_mode(enum.Enum):
    VIEW_ONLY = 0
    LOGICAL = 1


class convolution_mode(enum.Enum):
    CONVOLUTION = 0
    CROSS_CORRELATION = 1


class diagonal_alignment(enum.Enum):
    TOP_LEFT = 0
    BOTTOM_RIGHT = 1


class attention_implementation(enum.Enum):
    AUTO = 0
    COMPOSITE = 1
    UNIFIED = 2


class moe_grouped_matmul_mode(enum.Enum):
    NONE = 0
    GATHER = 1
    SCATTER = 2


class rng_distribution(enum.Enum):
    BERNOULLI = 0
    UNIFORM = 1
    NORMAL = 2


class resample_mode(enum.Enum):
    AVGPOOL_EXCLUDE_PADDING = 0
    AVGPOOL_INCLUDE_PADDING = 1
    BILINEAR = 2
    NEAREST = 3
    MAXPOOL = 4


class padding_mode(enum.Enum):
    EDGE_VAL_PAD = 0
    NEG_INF_PAD = 1
    ZERO_PAD = 2
