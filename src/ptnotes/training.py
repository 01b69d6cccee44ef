"""One optimisation step, plain or with gradient accumulation over micro-batches."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ptnotes.validation import (
    argument_error,
    builtin_optimizers,
    check_callable,
    check_number,
    check_type,
)

__all__ = ["accumulate_step", "train_step"]

#: A loss function ``(output, target) -> scalar tensor``, such as ``nn.CrossEntropyLoss()``.
LossFn = Callable[[Any, Any], torch.Tensor]


def _common(
    caller: Callable[..., Any],
    model: object,
    loss_fn: object,
    optimizer: object,
    max_grad_norm: object,
) -> float | None:
    """Check the arguments both steps share, and that ``optimizer`` holds the model."""
    model = check_type(caller, "model", model, nn.Module)
    check_callable(caller, "loss_fn", loss_fn)
    optimizer = check_type(caller, "optimizer", optimizer, torch.optim.Optimizer)
    norm = None
    if max_grad_norm is not None:
        norm = check_number(caller, "max_grad_norm", max_grad_norm, positive=True)
    if not any(p.requires_grad for p in model.parameters()):
        got = f"{type(model).__name__} with " + (
            "every parameter frozen (requires_grad=False)"
            if any(True for _ in model.parameters())
            else "no parameter"
        )
        expected = "a model with a trainable parameter (unfreeze some first)"
        raise argument_error(caller, "model", model, expected, got=got)
    tensors = [*model.named_parameters(), *model.named_buffers()]
    lazy = [n for n, t in tensors if nn.parameter.is_lazy(t)]
    if lazy:  # the forward pass would initialise them, which a refusal could not undo
        expected = (
            "a model whose lazy modules are initialised (run model(inputs) once, before "
            "building the optimizer)"
        )
        got = f"{type(model).__name__} with uninitialised {', '.join(lazy[:3])}"
        raise argument_error(caller, "model", model, expected, got=got)
    closure = inspect.signature(optimizer.step).parameters.get("closure")
    if closure is not None and closure.default is inspect.Parameter.empty:
        expected = (
            "an optimizer whose step() needs no closure (LBFGS evaluates the loss several "
            "times per step: call optimizer.step(closure) yourself)"
        )
        got = f"{type(optimizer).__name__}, whose step() requires a closure"
        raise argument_error(caller, "optimizer", optimizer, expected, error=TypeError, got=got)
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    missing = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in held]
    if missing:
        shown = ", ".join(missing[:3]) + (
            f", ... ({len(missing) - 3} more)" if len(missing) > 3 else ""
        )
        expected = "an optimizer over the model's trainable parameters"
        got = f"one that does not hold {shown}"
        raise argument_error(caller, "optimizer", optimizer, expected, got=got)
    return norm


#: Losses whose targets are class indices (int64) or class probabilities (floating).
_CLASS_LOSSES: tuple[Any, ...] = (nn.CrossEntropyLoss, nn.NLLLoss)
_CLASS_FUNCTIONS: tuple[Any, ...] = (F.cross_entropy, F.nll_loss)
#: Losses that compare the output with floating point targets of its shape.
_VALUE_LOSSES: tuple[Any, ...] = (
    nn.MSELoss,
    nn.L1Loss,
    nn.SmoothL1Loss,
    nn.HuberLoss,
    nn.BCELoss,
    nn.BCEWithLogitsLoss,
)
_VALUE_FUNCTIONS: tuple[Any, ...] = (
    F.mse_loss,
    F.l1_loss,
    F.smooth_l1_loss,
    F.huber_loss,
    F.binary_cross_entropy,
    F.binary_cross_entropy_with_logits,
)


def _loss_kind(loss_fn: object) -> tuple[str, str] | None:
    """``("class" | "value", name)`` for a loss whose targets ptnotes knows, else ``None``."""
    if isinstance(loss_fn, _CLASS_LOSSES):
        return "class", type(loss_fn).__name__
    if isinstance(loss_fn, _VALUE_LOSSES):
        return "value", type(loss_fn).__name__
    if any(loss_fn is f for f in _CLASS_FUNCTIONS):
        return "class", getattr(loss_fn, "__name__", "loss")
    if any(loss_fn is f for f in _VALUE_FUNCTIONS):
        return "value", getattr(loss_fn, "__name__", "loss")
    return None


def _check_targets(
    caller: Callable[..., Any], model: nn.Module, loss_fn: object, targets: object
) -> None:
    """What can be known of the targets before the forward pass: device and dtype."""
    kind = _loss_kind(loss_fn)
    if not isinstance(targets, torch.Tensor):
        if kind is not None:  # torch's error would be an AttributeError, or a TypeError
            expected = f"a tensor for {kind[1]} (convert with torch.as_tensor)"
            raise argument_error(caller, "targets", targets, expected, error=TypeError)
        return
    devices = {p.device for p in model.parameters()}
    if devices and targets.device not in devices:
        shown = ", ".join(sorted(str(d) for d in devices))
        expected = f"on the model's device ({shown}); move the batch with .to(device)"
        raise argument_error(
            caller, "targets", targets, expected, got=f"targets on {targets.device}"
        )
    if kind is None:
        return
    rule, name = kind
    if rule == "class" and not (targets.dtype == torch.int64 or targets.is_floating_point()):
        expected = (
            f"class indices (int64; convert with .long()) or class probabilities "
            f"(floating point) for {name}"
        )
        raise argument_error(caller, "targets", targets, expected, error=TypeError)
    if rule == "value" and not targets.is_floating_point():
        expected = f"a floating point tensor for {name} (convert with .float())"
        raise argument_error(caller, "targets", targets, expected, error=TypeError)


def _check_inputs(caller: Callable[..., Any], model: nn.Module, inputs: object, name: str) -> None:
    """Inputs that are one tensor, on another device than the model: refused before the
    forward pass (a dict or a tuple of tensors reaches the model as it is)."""
    devices = {p.device for p in model.parameters()}
    if isinstance(inputs, torch.Tensor) and devices and inputs.device not in devices:
        shown = ", ".join(sorted(str(d) for d in devices))
        expected = f"on the model's device ({shown}); move the batch with .to(device)"
        raise argument_error(caller, name, inputs, expected, got=f"inputs on {inputs.device}")


def _grad_holders(values: object) -> list[torch.Tensor]:
    """The tensors of ``values`` (a tensor, or lists, tuples and dicts of them) whose
    ``.grad`` is put back on a failure: those that require grad and are leaves or retain
    their gradient, and the leaves in the graph of a non-leaf among them (its AccumulateGrad
    nodes); not an intermediate of that graph that called ``retain_grad()``, nor a leaf that
    a reentrant checkpoint reaches only when it recomputes."""
    if isinstance(values, dict):
        values = list(values.values())
    if isinstance(values, list | tuple):
        return [t for item in values for t in _grad_holders(item)]
    if not isinstance(values, torch.Tensor) or not values.requires_grad:
        return []
    found = [values] if values.is_leaf or values.retains_grad else []
    seen: set[int] = set()
    pending = [values.grad_fn]
    while pending:  # the graph behind a non-leaf: its AccumulateGrad nodes hold the leaves
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            found.append(variable)
        pending.extend(next_node for next_node, _ in node.next_functions)
    return found


@contextmanager
def _restored_on_failure(
    model: nn.Module, optimizer: torch.optim.Optimizer, reached: Sequence[object]
) -> Iterator[None]:
    """Undo what the step changed on an error: the gradients of the model's parameters and
    of any other the optimizer holds (the tensor each was is put back, whose values
    ``zero_grad(set_to_none=True)`` leaves alone; a ``zero_grad`` that zeroes them in place
    leaves them zeroed), the ``.grad`` of the tensors :func:`_grad_holders` finds in
    ``reached`` (inputs, targets, the loss's own parameters: values and tensor put back, as
    ``backward()`` adds to one in place), the buffers updated in place (batch norm's running
    statistics; not one the forward pass reassigns) and the random state the forward pass
    drew from (dropout).
    """
    parameters: dict[int, torch.Tensor] = {id(p): p for p in model.parameters()}
    for group in optimizer.param_groups:
        parameters.update((id(p), p) for p in group["params"])
    gradients = [(p, p.grad) for p in parameters.values()]
    others = {id(t): t for t in _grad_holders(list(reached)) if id(t) not in parameters}
    added = [(t, t.grad, None if t.grad is None else t.grad.clone()) for t in others.values()]
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    cpu_rng = torch.get_rng_state()
    cuda = sorted({p.device for p in parameters.values() if p.device.type == "cuda"}, key=str)
    cuda_rng = [(d, torch.cuda.get_rng_state(d)) for d in cuda]
    try:
        yield
    except BaseException:
        with torch.no_grad():
            for parameter, gradient in gradients:
                parameter.grad = gradient
            for tensor, gradient, values in added:
                if gradient is not None and values is not None:
                    gradient.copy_(values)
                tensor.grad = gradient
            for buffer, saved in buffers:
                if buffer.shape == saved.shape:
                    buffer.copy_(saved)
        torch.set_rng_state(cpu_rng)
        for device, state in cuda_rng:
            torch.cuda.set_rng_state(state, device)
        raise


def _split(caller: Callable[..., Any], batch: object, label: str) -> tuple[Any, Any]:
    if not isinstance(batch, tuple | list) or len(batch) != 2:
        expected = "an (inputs, targets) pair"
        raise argument_error(caller, label, batch, expected, error=TypeError)
    inputs, _ = batch
    if isinstance(inputs, torch.Tensor) and inputs.ndim > 0 and inputs.shape[0] == 0:
        raise argument_error(
            caller, label, batch, "a batch with at least one sample", got="an empty batch"
        )
    return batch[0], batch[1]


def _loss(
    caller: Callable[..., Any],
    label: str,
    model: nn.Module,
    loss_fn: LossFn,
    inputs: Any,
    targets: Any,
) -> torch.Tensor:
    try:
        output = model(inputs)
    except _OUT_OF_MEMORY:
        raise
    except RuntimeError as error:  # torch's words for "not these inputs": a shape, a dtype
        expected = f"a batch whose inputs model accepts (inputs: {_shown(inputs)})"
        got = f"RuntimeError from model: {_first_line(error)}"
        raise argument_error(caller, label, inputs, expected, got=got) from error
    kind = _loss_kind(loss_fn)
    if (
        kind is not None
        and kind[0] == "class"
        and isinstance(output, torch.Tensor)
        and isinstance(targets, torch.Tensor)
        and targets.is_floating_point()
        and targets.shape != output.shape
    ):
        expected = (
            f"class indices (int64) or class probabilities of the output's shape "
            f"{tuple(output.shape)} for {kind[1]}"
        )
        got = f"floating point targets of shape {tuple(targets.shape)}"
        raise argument_error(caller, "targets", targets, expected, got=got)
    if (
        kind is not None
        and kind[0] == "value"
        and isinstance(output, torch.Tensor)
        and isinstance(targets, torch.Tensor)
        and targets.shape != output.shape
    ):
        expected = f"of the output's shape {tuple(output.shape)} for {kind[1]}"
        got = f"shape {tuple(targets.shape)}, which would broadcast and give a wrong loss"
        raise argument_error(caller, "targets", targets, expected, got=got)
    if isinstance(output, torch.Tensor) and isinstance(targets, torch.Tensor):
        try:
            shape = torch.broadcast_shapes(output.shape, targets.shape)  # type: ignore[no-untyped-call]
        except RuntimeError:
            shape = output.shape  # not broadcastable: class indices, say; loss_fn decides
        if shape != output.shape:
            expected = f"of a shape that matches the output {tuple(output.shape)}"
            got = (
                f"shape {tuple(targets.shape)}, which would broadcast to {tuple(shape)} "
                "and give a wrong loss"
            )
            raise argument_error(caller, "targets", targets, expected, got=got)
    try:
        loss = loss_fn(output, targets)
    except (RuntimeError, IndexError, ValueError) as error:  # torch's "not these targets"
        expected = (
            f"a batch whose targets loss_fn accepts for the output ({_shown(output)}; "
            f"targets: {_shown(targets)})"
        )
        got = f"{type(error).__name__} from loss_fn: {str(error).strip().splitlines()[0]}"
        raise argument_error(caller, label, targets, expected, got=got) from error
    if not isinstance(loss, torch.Tensor) or loss.ndim != 0:
        got = f"shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor) else None
        expected = "a function returning a scalar (0-dim) tensor (use a reduction such as 'mean')"
        raise argument_error(caller, "loss_fn", loss, expected, got=got)
    if not loss.requires_grad:
        expected = "a function whose loss depends on the model's trainable parameters"
        got = (
            "a loss that does not require grad (does loss_fn detach its input or rebuild a "
            "tensor from .item()? does the model run under torch.no_grad()?)"
        )
        raise argument_error(caller, "loss_fn", loss_fn, expected, got=got)
    return loss


_OUT_OF_MEMORY: type[BaseException] = getattr(
    torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError
)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


#: The optimizers of torch.optim that take sparse gradients (SparseAdam takes only those).
_SPARSE_OPTIMIZERS: tuple[type[torch.optim.Optimizer], ...] = (
    torch.optim.SGD,
    torch.optim.Adagrad,
    torch.optim.SparseAdam,
)


def _loss_parameters(loss_fn: object) -> list[torch.Tensor]:
    """A loss module's own parameters (a learned weight), whose .grad backward() may set."""
    return list(loss_fn.parameters()) if isinstance(loss_fn, nn.Module) else []


def _check_gradients(
    caller: Callable[..., Any], model: nn.Module, optimizer: torch.optim.Optimizer
) -> None:
    """Gradients that the step of a :mod:`torch.optim` class refuses only after changing the
    parameters it reached first: sparse ones (for all but SGD, Adagrad and SparseAdam, and
    for SGD and Adagrad with ``weight_decay``) and dense ones for SparseAdam. Checked for
    those classes and their subclasses, a subclass as the class it derives from (one whose
    own step takes sparse gradients is refused too); not ``fused=True`` SGD or Adagrad with
    sparse gradients, which torch refuses one parameter group at a time."""
    if not isinstance(optimizer, tuple(builtin_optimizers())):
        return
    names = {id(p): n for n, p in model.named_parameters()}
    kind = type(optimizer).__name__
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            grad = parameter.grad
            if grad is None:
                continue
            name = names.get(id(parameter), "a parameter")
            if isinstance(optimizer, torch.optim.SparseAdam) and not grad.is_sparse:
                expected = (
                    "an optimizer for dense gradients (SparseAdam takes only sparse ones, "
                    "from nn.Embedding(sparse=True); use Adam)"
                )
                got = f"SparseAdam, and {name} has a dense gradient"
                raise argument_error(caller, "optimizer", optimizer, expected, got=got)
            if grad.is_sparse and not isinstance(optimizer, _SPARSE_OPTIMIZERS):
                expected = "an optimizer for sparse gradients (SGD, Adagrad or SparseAdam)"
                got = f"{kind}, and {name} has a sparse gradient"
                raise argument_error(caller, "optimizer", optimizer, expected, got=got)
            decay = group.get("weight_decay", 0)
            if grad.is_sparse and decay and not isinstance(optimizer, torch.optim.SparseAdam):
                expected = "an optimizer without weight_decay for sparse gradients"
                got = f"{kind} with weight_decay={decay}, and {name} has a sparse gradient"
                raise argument_error(caller, "optimizer", optimizer, expected, got=got)


def _shown(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"shape {tuple(value.shape)}, {value.dtype}"
    return type(value).__name__


def _backward(caller: Callable[..., Any], loss: torch.Tensor) -> None:
    try:
        loss.backward()  # type: ignore[no-untyped-call]  # unannotated in torch
    except RuntimeError as error:
        expected = "a function whose loss backward() can differentiate"
        got = f"RuntimeError from loss.backward(): {str(error).strip().splitlines()[0]}"
        raise argument_error(caller, "loss_fn", loss, expected, got=got) from error


def _clip_and_step(
    caller: Callable[..., Any],
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    max_grad_norm: float | None,
) -> None:
    _check_gradients(caller, model, optimizer)
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()


def train_step(
    model: nn.Module,
    batch: tuple[Any, Any] | Sequence[Any],
    loss_fn: LossFn,
    optimizer: torch.optim.Optimizer,
    *,
    max_grad_norm: float | None = None,
) -> float:
    """Run one optimisation step on ``batch`` and return the loss.

    The five steps, in the order that matters: ``optimizer.zero_grad(set_to_none=True)``
    (gradients *accumulate* in ``.grad`` across ``backward()`` calls, so they are
    cleared first; ``None`` rather than zeros saves a memset and lets the optimizer
    skip parameters that got no gradient), forward, loss, ``backward()``, optionally
    :func:`torch.nn.utils.clip_grad_norm_` (after ``backward``, which makes the
    gradients, and before ``step``, which uses them), then ``optimizer.step()``.

    The model's mode is left as it is: call ``model.train()`` first.

    Bad input changes nothing, but for the cases at the end of this paragraph. The
    arguments, the inputs' device (of inputs that are one tensor: a dict or a tuple of
    tensors reaches the model), and the targets' device, type and dtype (for the losses of
    :mod:`torch.nn` whose targets it knows: a list of targets is refused with
    :class:`TypeError`) are checked before the forward pass; what needs the output (the
    targets' shape against it, the loss) is checked after it, and so are, for the classes of
    :mod:`torch.optim` and their subclasses, the gradients that torch.optim's step refuses
    after updating some parameters: sparse ones (for all but SGD, Adagrad and SparseAdam, and for
    SGD and Adagrad with ``weight_decay``) and dense ones for SparseAdam. A refusal then
    puts back the gradients of the parameters (the tensor each had), the ``.grad`` of the
    inputs and targets that require grad (a tensor, or lists, tuples and dicts of them; a
    non-leaf one that called ``retain_grad()`` too), of the leaves a non-leaf one was
    computed from and of a ``loss_fn`` module's own parameters, with what each held before,
    the buffers updated in place (batch norm's running statistics) and the random state
    (dropout's). A :class:`RuntimeError` torch raises from the model for inputs it refuses
    (a shape, a dtype, or the device of inputs that are not one tensor), and the errors
    torch raises from the loss for targets it refuses (a :class:`RuntimeError`,
    :class:`IndexError` or :class:`ValueError`: a class index out of range, a number of
    targets other than the output's, say) or from ``backward()``, come as
    :class:`ValueError` naming the argument, torch's message attached; the model's other
    errors come as torch raises them (an :class:`IndexError` from
    :class:`~torch.nn.Embedding` for an index out of range, a :class:`TypeError` for a list
    of inputs). An optimizer whose ``step()`` needs a closure (LBFGS) is refused, and so is
    a model with a lazy module (``nn.LazyLinear``, ``nn.LazyBatchNorm1d``) whose parameters
    or buffers are not yet initialised: a forward pass would initialise it, which a refusal
    could not undo. The cases: an optimizer whose ``step()`` raises after updating some
    parameters leaves them, and its state, as it left them; one whose ``zero_grad()``
    zeroes the gradients in place leaves them zeroed; a tensor that ``backward()`` reaches
    otherwise (one a loss function closes over, a tensor of the model that is not a
    registered parameter, a leaf inside another container, an intermediate that called
    ``retain_grad()``) keeps the ``.grad`` ``backward()`` gave it; a buffer the
    forward pass reassigns stays reassigned; and a lazy module with nothing to initialise
    (``nn.LazyBatchNorm1d`` with ``affine=False`` and ``track_running_stats=False``) becomes
    its non-lazy class.

    Args:
        model: the model; ``model(inputs)`` gives the output.
        batch: an ``(inputs, targets)`` pair.
        loss_fn: ``loss_fn(output, targets)`` gives a scalar tensor.
        optimizer: an optimizer over the model's parameters.
        max_grad_norm: if given and every gradient is dense, rescale the gradients so
            that their total 2-norm, over all the model's parameters together, is at most
            this value, when that norm is finite: a non-finite one is not refused, and
            clipping turns an infinite gradient into NaN, which the step writes into the
            parameter.

    Returns:
        The loss before the step, as a Python float.

    Raises:
        TypeError: if an argument has the wrong type, ``batch`` is not a pair, the
            targets (for a loss of :mod:`torch.nn` whose targets it knows) are not a
            tensor or not of a dtype this function takes for that loss (``int64`` class
            indices or floating point class probabilities for
            :class:`~torch.nn.CrossEntropyLoss` and :class:`~torch.nn.NLLLoss`, floating
            point for a loss of values such as :class:`~torch.nn.MSELoss`: ``uint8`` class
            indices and ``int64`` targets for MSELoss, which torch's losses take, are refused
            too), or ``optimizer.step()`` needs a closure.
        ValueError: if ``max_grad_norm`` is not positive and finite, ``model`` has no
            trainable parameter or a lazy module not yet initialised, ``loss_fn`` does
            not return a scalar tensor that requires grad, ``optimizer`` does not hold
            every trainable parameter of ``model`` (the step would train nothing, or not
            all) or, being a class of :mod:`torch.optim`, cannot take its gradients at all
            (dense ones for :class:`~torch.optim.SparseAdam`, sparse ones for all but SGD,
            Adagrad and SparseAdam), the inputs (one tensor) hold no sample, the inputs
            (one tensor) or the targets are on another device than the model, the model (with a
            :class:`RuntimeError`), ``loss_fn`` or ``backward()`` refuses them, or the
            targets' shape would broadcast against the output's into a larger shape
            (``(N,)`` against ``(N, 1)``: a wrong loss).

    Examples:
        >>> import torch
        >>> from torch import nn
        >>> from ptnotes.training import train_step
        >>> model = nn.Linear(1, 1, bias=False)
        >>> with torch.no_grad():
        ...     _ = model.weight.fill_(0.0)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> batch = (torch.tensor([[1.0], [2.0]]), torch.tensor([[2.0], [4.0]]))
        >>> train_step(model, batch, nn.MSELoss(), optimizer)
        10.0
        >>> model.weight
        Parameter containing:
        tensor([[1.]], requires_grad=True)

        A parameter the forward pass does not use keeps ``.grad`` at ``None`` and is
        skipped by the step, weight decay included; the mode stays as it was; here clipping
        leaves a total gradient norm of ``max_grad_norm``:

        >>> class Partial(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.used, self.unused = nn.Linear(1, 1), nn.Linear(1, 1)
        ...     def forward(self, x):
        ...         return self.used(x)
        >>> net = Partial().eval()
        >>> decay = torch.optim.SGD(net.parameters(), lr=0.1, weight_decay=0.5)
        >>> before = net.unused.weight.clone()
        >>> _ = train_step(net, batch, nn.MSELoss(), decay, max_grad_norm=0.5)
        >>> net.unused.weight.grad is None, torch.equal(net.unused.weight, before), net.training
        (True, True, False)
        >>> grads = [p.grad for p in net.used.parameters()]
        >>> round(torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])).item(), 4)
        0.5

        An infinite gradient is clipped to NaN, not refused, and the step applies it:

        >>> big = nn.Linear(1, 1, bias=False)
        >>> with torch.no_grad():
        ...     _ = big.weight.fill_(1.0)
        >>> huge = (torch.tensor([[1e38]]), torch.tensor([[0.0]]))
        >>> sgd_big = torch.optim.SGD(big.parameters(), lr=0.1)
        >>> train_step(big, huge, nn.MSELoss(), sgd_big, max_grad_norm=1.0)
        inf
        >>> big.weight.isnan().item()
        True

        A class index out of range is torch's :class:`IndexError`, re-raised naming the
        batch; a list of targets is refused before the forward pass:

        >>> classifier = nn.Linear(1, 2)
        >>> sgd = torch.optim.SGD(classifier.parameters(), lr=0.1)
        >>> inputs = torch.tensor([[1.0], [2.0]])
        >>> train_step(classifier, (inputs, torch.tensor([0, 5])), nn.CrossEntropyLoss(), sgd)
        Traceback (most recent call last):
          ...
        ValueError: train_step() expects batch ... IndexError from loss_fn: Target 5 is out ...
        >>> train_step(classifier, (inputs, [0, 1]), nn.CrossEntropyLoss(), sgd)
        Traceback (most recent call last):
          ...
        TypeError: train_step() expects targets to be a tensor for CrossEntropyLoss ...

        Torch's :class:`ValueError` for three targets against two outputs is re-raised naming
        the batch too; inputs of one tensor with no sample are refused before the forward pass:

        >>> train_step(classifier, (inputs, torch.tensor([0, 1, 1])), nn.CrossEntropyLoss(), sgd)
        Traceback (most recent call last):
          ...
        ValueError: train_step() expects batch ... ValueError from loss_fn: Expected input batch...
        >>> empty = (torch.zeros(0, 1), torch.zeros(0, dtype=torch.long))
        >>> train_step(classifier, empty, nn.CrossEntropyLoss(), sgd)
        Traceback (most recent call last):
          ...
        ValueError: train_step() expects batch to be a batch with at least one sample, got an ...

        The model's other errors are torch's own: a list of inputs, an index out of
        range for an embedding:

        >>> train_step(classifier, ([[1.0]], torch.tensor([0])), nn.CrossEntropyLoss(), sgd)
        Traceback (most recent call last):
          ...
        TypeError: linear(): argument 'input' ... must be Tensor, not list
        >>> table = nn.Embedding(3, 2)
        >>> lookup = torch.optim.SGD(table.parameters(), lr=0.1)
        >>> train_step(table, (torch.tensor([5]), torch.zeros(1, 2)), nn.MSELoss(), lookup)
        Traceback (most recent call last):
          ...
        IndexError: index out of range in self

        Targets of a dtype that torch's loss takes are refused all the same when they are
        ``uint8`` class indices, or ``int64`` targets for :class:`~torch.nn.MSELoss`:

        >>> small = torch.tensor([0, 1], dtype=torch.uint8)
        >>> nn.CrossEntropyLoss()(classifier(inputs), small).shape  # torch takes them
        torch.Size([])
        >>> train_step(classifier, (inputs, small), nn.CrossEntropyLoss(), sgd)
        Traceback (most recent call last):
          ...
        TypeError: train_step() expects targets to be class indices (int64; convert with ...
        >>> whole = torch.tensor([[2], [4]])
        >>> nn.MSELoss()(model(inputs), whole).dtype  # torch takes them
        torch.float32
        >>> train_step(model, (inputs, whole), nn.MSELoss(), optimizer)
        Traceback (most recent call last):
          ...
        TypeError: train_step() expects targets to be a floating point tensor for MSELoss ...
    """
    norm = _common(train_step, model, loss_fn, optimizer, max_grad_norm)
    inputs, targets = _split(train_step, batch, "batch")
    _check_inputs(train_step, model, inputs, "inputs")
    _check_targets(train_step, model, loss_fn, targets)
    with _restored_on_failure(model, optimizer, [inputs, targets, _loss_parameters(loss_fn)]):
        optimizer.zero_grad(set_to_none=True)
        loss = _loss(train_step, "batch", model, loss_fn, inputs, targets)
        _backward(train_step, loss)
        _clip_and_step(train_step, model, optimizer, norm)
    return loss.item()


def accumulate_step(
    model: nn.Module,
    micro_batches: Sequence[tuple[Any, Any]],
    loss_fn: LossFn,
    optimizer: torch.optim.Optimizer,
    *,
    max_grad_norm: float | None = None,
) -> float:
    """Run one optimisation step on several micro-batches, as if they were one batch.

    Gradients accumulate in ``.grad`` across ``backward()`` calls, so calling
    ``backward()`` once per micro-batch and ``step()`` once sums their gradients. For
    a loss that is the plain mean over the samples the big batch's loss is the
    *weighted* mean ``sum(n_i * loss_i) / N`` of the micro-batch losses (``n_i``
    samples each, ``N`` in total), so each micro-batch loss is scaled by its share
    ``n_i / N`` before ``backward()``. Dividing by the number of micro-batches instead is right
    only when they all have the same size.

    The result equals one step on the concatenated batch (up to floating-point
    rounding) when the loss is a mean over samples and the forward pass treats
    samples independently: batch normalisation in training mode does not (it
    normalises each micro-batch with its own statistics). The shares are made for a
    plain mean over the samples: with ``reduction="sum"`` they would scale the sum down,
    and a :class:`~torch.nn.CrossEntropyLoss` with ``weight=``, or with targets equal to
    its ``ignore_index``, divides by the weights of the targets it counts rather than by
    their number, so its step and its loss can differ from the whole batch's.

    Args:
        model: the model; ``model(inputs)`` gives the output.
        micro_batches: a non-empty sequence of ``(inputs, targets)`` pairs; ``inputs``
            are tensors whose dimension 0 counts the samples.
        loss_fn: ``loss_fn(output, targets)`` gives a scalar tensor, the mean over
            the samples.
        optimizer: an optimizer over the model's parameters.
        max_grad_norm: if given and every accumulated gradient is dense, clip their
            total norm to this value before the step, as :func:`train_step` does.

    Returns:
        ``sum(n_i * loss_i) / N`` as a Python float, which is the loss of the whole
        batch for a loss that is the plain mean over the samples.

    Bad input changes nothing, as in :func:`train_step` and with its cases: every
    micro-batch is checked before the first forward pass, and a refusal after one (a later
    micro-batch's targets against its output) puts the gradients that :func:`train_step`
    names, the buffers and the random state back as they were.

    Raises:
        TypeError: if an argument has the wrong type, ``micro_batches`` is not a
            sequence (a generator cannot be counted in advance), an ``inputs`` is
            not a tensor with a batch dimension, targets (for a loss of :mod:`torch.nn`
            whose targets it knows) are not a tensor or have a dtype that :func:`train_step`
            refuses for that loss, or ``optimizer.step()`` needs a closure.
        ValueError: if ``micro_batches`` is empty, a micro-batch holds no sample,
            ``max_grad_norm`` is not positive and finite, ``model`` has no trainable
            parameter or a lazy module not yet initialised, ``loss_fn`` does not
            return a scalar tensor that requires grad, ``optimizer`` does not hold
            every trainable parameter of ``model`` or (a class of :mod:`torch.optim`)
            cannot take its gradients at all, an ``inputs`` is on another device or
            refused by the model (a :class:`RuntimeError`), or targets are on another
            device, refused by ``loss_fn`` or would broadcast against the output.

    Examples:
        >>> import torch
        >>> from torch import nn
        >>> from ptnotes.training import accumulate_step
        >>> model = nn.Linear(1, 1, bias=False)
        >>> with torch.no_grad():
        ...     _ = model.weight.fill_(0.0)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> micro_batches = [
        ...     (torch.tensor([[1.0]]), torch.tensor([[2.0]])),
        ...     (torch.tensor([[2.0]]), torch.tensor([[4.0]])),
        ... ]
        >>> accumulate_step(model, micro_batches, nn.MSELoss(), optimizer)
        10.0
        >>> model.weight  # the same as train_step on the two samples at once
        Parameter containing:
        tensor([[1.]], requires_grad=True)

        An ``inputs`` without a batch dimension is refused, and so are targets of a dtype
        that :func:`train_step` refuses for the loss (``int64`` for MSELoss):

        >>> one = (torch.tensor(1.0), torch.tensor(2.0))
        >>> accumulate_step(model, [one], nn.MSELoss(), optimizer)
        Traceback (most recent call last):
          ...
        TypeError: accumulate_step() expects the inputs of micro_batches[0] to be a tensor with ...
        >>> whole = (torch.tensor([[1.0]]), torch.tensor([[2]]))
        >>> accumulate_step(model, [whole], nn.MSELoss(), optimizer)
        Traceback (most recent call last):
          ...
        TypeError: accumulate_step() expects targets to be a floating point tensor for MSELoss ...

        Micro-batches of different sizes give the whole batch's step; with batch
        normalisation in training mode they do not:

        >>> def steps(make=list):  # a fresh model (and batch norm) for each of the two runs
        ...     _ = torch.manual_seed(0)
        ...     x, y = torch.randn(5, 3), torch.randn(5, 2)
        ...     weights = []
        ...     for accumulate in (False, True):
        ...         _ = torch.manual_seed(1)
        ...         net = nn.Sequential(nn.Linear(3, 2), *make())
        ...         sgd = torch.optim.SGD(net.parameters(), lr=0.1)
        ...         if accumulate:
        ...             accumulate_step(net, [(x[:2], y[:2]), (x[2:], y[2:])], nn.MSELoss(), sgd)
        ...         else:
        ...             train_step(net, (x, y), nn.MSELoss(), sgd)
        ...         weights.append(net[0].weight.detach())
        ...     return torch.allclose(*weights)
        >>> from ptnotes.training import train_step
        >>> steps(), steps(lambda: [nn.BatchNorm1d(2)])
        (True, False)

        A cross-entropy with these class weights, or with an ignored target, is not a plain
        mean over the samples; in these two runs the step and the loss both differ from the
        whole batch's:

        >>> def same(loss_fn, y):
        ...     x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]])
        ...     weights, losses = [], []
        ...     for accumulate in (False, True):
        ...         _ = torch.manual_seed(1)
        ...         net = nn.Linear(2, 3)
        ...         sgd = torch.optim.SGD(net.parameters(), lr=0.1)
        ...         if accumulate:
        ...             parts = [(x[:2], y[:2]), (x[2:], y[2:])]
        ...             losses.append(accumulate_step(net, parts, loss_fn, sgd))
        ...         else:
        ...             losses.append(train_step(net, (x, y), loss_fn, sgd))
        ...         weights.append(net.weight.detach())
        ...     return torch.allclose(*weights), abs(losses[0] - losses[1]) < 1e-6
        >>> y = torch.tensor([0, 0, 1, 2])
        >>> same(nn.CrossEntropyLoss(), y)
        (True, True)
        >>> same(nn.CrossEntropyLoss(weight=torch.tensor([1.0, 5.0, 5.0])), y)
        (False, False)
        >>> same(nn.CrossEntropyLoss(), torch.tensor([0, -100, 1, 2]))
        (False, False)
    """
    me = accumulate_step
    norm = _common(me, model, loss_fn, optimizer, max_grad_norm)
    if not isinstance(micro_batches, Sequence) or isinstance(micro_batches, str | bytes):
        expected = "a sequence (e.g. a list) of (inputs, targets) pairs"
        raise argument_error(me, "micro_batches", micro_batches, expected, error=TypeError)
    if not micro_batches:
        raise argument_error(
            me, "micro_batches", micro_batches, "at least one micro-batch", got="none"
        )
    pairs = [_split(me, mb, f"micro_batches[{i}]") for i, mb in enumerate(micro_batches)]
    counts = []
    for i, (inputs, _) in enumerate(pairs):
        if not isinstance(inputs, torch.Tensor) or inputs.ndim == 0:
            expected = "a tensor with a batch dimension"
            raise argument_error(
                me, f"the inputs of micro_batches[{i}]", inputs, expected, error=TypeError
            )
        counts.append(inputs.shape[0])
    for i, (inputs, targets) in enumerate(pairs):
        _check_inputs(me, model, inputs, f"the inputs of micro_batches[{i}]")
        _check_targets(me, model, loss_fn, targets)
    total = sum(counts)

    weighted_sum: torch.Tensor | None = None
    with _restored_on_failure(model, optimizer, [*pairs, _loss_parameters(loss_fn)]):
        optimizer.zero_grad(set_to_none=True)
        for i, ((inputs, targets), count) in enumerate(zip(pairs, counts, strict=True)):
            label = f"micro_batches[{i}]"
            loss = _loss(me, label, model, loss_fn, inputs, targets) * (count / total)
            _backward(me, loss)
            part = loss.detach()
            weighted_sum = part if weighted_sum is None else weighted_sum + part
        _clip_and_step(me, model, optimizer, norm)
    assert weighted_sum is not None  # at least one micro-batch, checked above
    return weighted_sum.item()
